package review

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// semver is a parsed SemVer 2.0.0 version.
type semver struct {
	major, minor, patch int
	pre                 []string // dot-separated pre-release identifiers
}

var semverRE = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

func parseSemver(s string) (semver, bool) {
	m := semverRE.FindStringSubmatch(s)
	if m == nil {
		return semver{}, false
	}
	var v semver
	var err error
	if v.major, err = strconv.Atoi(m[1]); err != nil {
		return semver{}, false
	}
	if v.minor, err = strconv.Atoi(m[2]); err != nil {
		return semver{}, false
	}
	if v.patch, err = strconv.Atoi(m[3]); err != nil {
		return semver{}, false
	}
	if m[4] != "" {
		v.pre = strings.Split(m[4], ".")
	}
	return v, true
}

// compare orders versions by SemVer precedence (§11); build metadata is
// ignored.
func (a semver) compare(b semver) int {
	for _, d := range [][2]int{{a.major, b.major}, {a.minor, b.minor}, {a.patch, b.patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a.pre) == 0 && len(b.pre) == 0:
		return 0
	case len(a.pre) == 0:
		return 1 // a release follows its pre-releases
	case len(b.pre) == 0:
		return -1
	}
	for i := 0; i < len(a.pre) && i < len(b.pre); i++ {
		x, y := a.pre[i], b.pre[i]
		xn, xErr := strconv.Atoi(x)
		yn, yErr := strconv.Atoi(y)
		switch {
		case xErr == nil && yErr == nil:
			if xn != yn {
				if xn < yn {
					return -1
				}
				return 1
			}
		case xErr == nil:
			return -1 // numeric identifiers sort before alphanumeric ones
		case yErr == nil:
			return 1
		case x != y:
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a.pre) < len(b.pre):
		return -1
	case len(a.pre) > len(b.pre):
		return 1
	}
	return 0
}

// additionRules are the compatible changes that add functionality: SemVer
// asks for a minor release for them.
var additionRules = map[string]bool{
	"http-operation-added": true, "tool-added": true, "cli-command-added": true, "mcp-surface-added": true,
	"realtime-contract-added": true, "realtime-event-added": true, "error-added": true,
	"request-optional-property-added": true, "response-property-added": true, "response-schema-added": true,
	// A new accepted value or variant (a currency, a payment method).
	"request-enum-widened": true, "request-any-of-widened": true, "request-one-of-widened": true,
}

// versions checks the version change against what the findings say, as
// SemVer 2.0.0 does: a backwards incompatible change needs a new major
// version (§8), added backwards compatible functionality a new minor one
// (§7). A 0.y.z version is initial development, where "anything MAY change
// at any time" (§4): a breaking change there is reported as info only.
func (c *comparer) versions() {
	ov, ok1 := parseSemver(c.old.Version)
	nv, ok2 := parseSemver(c.new.Version)
	if !ok1 || !ok2 {
		return
	}
	breaking, additions := 0, 0
	for _, f := range c.findings {
		switch {
		case f.Severity == Breaking:
			breaking++
		case f.Severity == Info && additionRules[f.Rule]:
			additions++
		}
	}
	at := pos(c.new, "version", "")
	// A pre-release "might not satisfy the intended compatibility
	// requirements as denoted by its associated normal version" (§9):
	// 3.0.0-rc.1 → 3.0.0-rc.2 (or → 3.0.0) may break what rc.1 offered.
	fromPre := len(ov.pre) > 0 && nv.major == ov.major
	switch cmpv := nv.compare(ov); {
	case cmpv < 0:
		c.emit("version-decreased", Warning, "contract", "", "contract#/version", at,
			"version goes back from %s to %s: SemVer versions only increase", c.old.Version, c.new.Version)
		return
	case fromPre:
		// Nothing to ask of a version that follows a pre-release of
		// its own major version.
	case breaking > 0 && ov.major >= 1 && nv.major <= ov.major:
		want := fmt.Sprintf("%d.0.0", ov.major+1)
		c.emit("version-major-bump-missing", Warning, "contract", "", "contract#/version", at,
			"%d breaking %s but the version goes from %s to %s: SemVer requires a new major version (%s) for backwards incompatible changes",
			breaking, plural(breaking, "change", "changes"), c.old.Version, c.new.Version, want)
	case breaking > 0 && ov.major == 0 && nv.major == 0 && nv.minor <= ov.minor:
		c.emit("version-major-bump-missing", Info, "contract", "", "contract#/version", at,
			"%d breaking %s with the version going from %s to %s: SemVer lets anything change in 0.y.z (initial development), but callers pinning ^%d.%d expect %d.%d.0",
			breaking, plural(breaking, "change", "changes"), c.old.Version, c.new.Version, ov.major, ov.minor, ov.major, ov.minor+1)
	case breaking == 0 && additions > 0 && ov.major >= 1 && nv.major == ov.major && nv.minor <= ov.minor:
		c.emit("version-minor-bump-missing", Info, "contract", "", "contract#/version", at,
			"%d compatible %s but the version goes from %s to %s: SemVer asks for a new minor version (%d.%d.0) when functionality is added",
			additions, plural(additions, "addition", "additions"), c.old.Version, c.new.Version, ov.major, ov.minor+1)
	}
}
