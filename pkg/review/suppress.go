package review

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// SuppressionsFile is the conventional name of the suppressions file,
// committed next to the contract.
const SuppressionsFile = "stitch-review.yaml"

// Suppression accepts one reviewed finding by fingerprint.
type Suppression struct {
	// Fingerprint is the finding's fingerprint (16 hex characters; a
	// prefix of at least 12 is accepted).
	Fingerprint string `yaml:"fingerprint"`
	// Reason says why the change is accepted (required).
	Reason string `yaml:"reason"`
	// Expires is an optional last day (YYYY-MM-DD) the suppression
	// applies; after it the finding counts again and a warning says so.
	Expires string `yaml:"expires,omitempty"`

	expires time.Time
	pos     graph.Pos
}

// Suppressions is a parsed stitch-review.yaml:
//
//	suppressions:
//	  - fingerprint: 3f1c2b7a9d0e4f51
//	    reason: "clients migrated in #482"
//	    expires: 2027-01-31
type Suppressions struct {
	Suppressions []Suppression `yaml:"suppressions"`
	file         string
}

var fingerprintRE = regexp.MustCompile(`^[0-9a-f]{12,16}$`)

// ParseSuppressions decodes a suppressions file strictly: unknown keys, a
// missing reason, a malformed fingerprint or date are errors naming
// file:line. file labels positions in errors and warnings.
func ParseSuppressions(file string, data []byte) (*Suppressions, error) {
	s := &Suppressions{file: file}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil {
		if errors.Is(err, io.EOF) {
			return s, nil // an empty file suppresses nothing
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	// Decode again as nodes, for the line of each suppression.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var items []*yaml.Node
	if len(root.Content) == 1 && root.Content[0].Kind == yaml.MappingNode {
		m := root.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "suppressions" && m.Content[i+1].Kind == yaml.SequenceNode {
				items = m.Content[i+1].Content
			}
		}
	}
	var errs []string
	seen := map[string]int{}
	for i := range s.Suppressions {
		sp := &s.Suppressions[i]
		line, col := 0, 0
		if i < len(items) {
			line, col = items[i].Line, items[i].Column
		}
		sp.pos = graph.Pos{File: file, Line: line, Col: col}
		at := fmt.Sprintf("%s:%d", file, line)
		sp.Fingerprint = strings.TrimSpace(sp.Fingerprint)
		if !fingerprintRE.MatchString(sp.Fingerprint) {
			errs = append(errs, fmt.Sprintf("%s: fingerprint %q must be 12 to 16 lower-case hex characters (copy it from the report)", at, sp.Fingerprint))
		}
		if prev, dup := seen[sp.Fingerprint]; dup {
			errs = append(errs, fmt.Sprintf("%s: fingerprint %s is already suppressed at line %d", at, sp.Fingerprint, prev))
		}
		seen[sp.Fingerprint] = line
		if strings.TrimSpace(sp.Reason) == "" {
			errs = append(errs, fmt.Sprintf("%s: reason is required: say why the change is accepted", at))
		}
		if sp.Expires != "" {
			t, err := time.Parse(time.DateOnly, sp.Expires)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: expires %q is not a YYYY-MM-DD date", at, sp.Expires))
			}
			sp.expires = t
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return s, nil
}

// LoadSuppressions reads and parses a suppressions file.
func LoadSuppressions(path string) (*Suppressions, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSuppressions(path, data)
}

// apply marks suppressed findings and adds a warning for each expired or
// unused suppression.
func (s *Suppressions) apply(r *Report, now time.Time) {
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	for i := range s.Suppressions {
		sp := &s.Suppressions[i]
		used := false
		expired := !sp.expires.IsZero() && today.After(sp.expires)
		for j := range r.Findings {
			f := &r.Findings[j]
			if !strings.HasPrefix(f.Fingerprint, sp.Fingerprint) || f.Rule == "suppression-expired" || f.Rule == "suppression-unused" {
				continue
			}
			used = true
			if !expired {
				f.Suppressed = true
				f.SuppressionReason = sp.Reason
			}
		}
		loc := "suppression " + sp.Fingerprint
		switch {
		case expired && used:
			r.Findings = append(r.Findings, Finding{Rule: "suppression-expired", Severity: Warning, Surface: "suppressions",
				Location: loc, Pos: sp.pos, Fingerprint: fingerprint("suppression-expired", "", loc),
				Message: fmt.Sprintf("suppression of %s expired on %s: the finding counts again; renew or remove it", sp.Fingerprint, sp.Expires)})
		case expired:
			r.Findings = append(r.Findings, Finding{Rule: "suppression-expired", Severity: Warning, Surface: "suppressions",
				Location: loc, Pos: sp.pos, Fingerprint: fingerprint("suppression-expired", "", loc),
				Message: fmt.Sprintf("suppression of %s expired on %s and matches no finding: remove it", sp.Fingerprint, sp.Expires)})
		case !used:
			r.Findings = append(r.Findings, Finding{Rule: "suppression-unused", Severity: Warning, Surface: "suppressions",
				Location: loc, Pos: sp.pos, Fingerprint: fingerprint("suppression-unused", "", loc),
				Message: fmt.Sprintf("suppression of %s matches no finding: remove it", sp.Fingerprint)})
		}
	}
}
