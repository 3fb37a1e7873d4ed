package project

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// MaxToolNameLen is the longest tool name accepted on MCP and AGENT.
const MaxToolNameLen = 64

// toolNameRE is the tool-name charset and length every MCP and Agent
// provider accepts (the intersection of their rules).
var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// singularExceptions are service words that stay unchanged when singularised.
var singularExceptions = map[string]bool{
	"analytics": true, "status": true, "stats": true, "settings": true,
	"media": true, "progress": true, "news": true,
}

// ToolName derives the tool name of operation service.action when it declares
// no explicit tool.name:
//
//   - the service has every character outside [A-Za-z0-9_] replaced by '_',
//     the action every character outside [A-Za-z0-9_-];
//   - "list" gives list_<service> (plural kept);
//   - "get", "create", "update" and "delete" give <verb>_<singular>;
//   - any other action is split from camelCase to snake_case, lower-cased,
//     stripped of one leading '_', and suffixed with _<singular>.
//
// <singular> is the normalised service with only its last '_' segment
// singularised ("…ies" → "…y", a final "s" dropped unless "ss" or the whole
// word is "s"; analytics,
// status, stats, settings, media, progress and news stay as they are).
// Nothing else is collapsed or trimmed. The result is not validated; see
// [ValidToolName] and [ResolveToolName].
//
//	ToolName("books", "list")    // "list_books"
//	ToolName("books", "get")     // "get_book"
//	ToolName("loans", "giveBack") // "give_back_loan"
func ToolName(service, action string) string {
	svc := replaceOutside(service, false)
	act := replaceOutside(action, true)
	switch act {
	case "list":
		return "list_" + svc
	case "get", "create", "update", "delete":
		return act + "_" + singularService(svc)
	}
	return strings.TrimPrefix(camelToSnake(act), "_") + "_" + singularService(svc)
}

// ValidToolName reports why name cannot be an MCP or Agent tool name, or nil
// when it matches ^[A-Za-z0-9_-]{1,64}$.
func ValidToolName(name string) error {
	if toolNameRE.MatchString(name) {
		return nil
	}
	if n := utf8.RuneCountInString(name); n > MaxToolNameLen {
		return fmt.Errorf("tool name %q is %d characters long; the limit is %d: declare a shorter tool.name", name, n, MaxToolNameLen)
	}
	if name == "" {
		return fmt.Errorf("tool name is empty: declare a tool.name matching ^[A-Za-z0-9_-]{1,64}$")
	}
	return fmt.Errorf("tool name %q must match ^[A-Za-z0-9_-]{1,64}$ (letters, digits, '_' and '-' only)", name)
}

// ResolveToolName returns the name operation service.action has on transport
// t: explicit when non-empty, else [ToolName]. The error says why the name
// is unusable on t; the name is returned either way so listings can show
// the offending row.
//
// On MCP and AGENT the name must pass [ValidToolName], and a derived name
// needs a service with at least one ASCII letter or digit (a service such as
// "///" derives a charset-legal but meaningless name; an explicit tool.name
// rescues it). CLI command names skip both checks: shells accept any name.
func ResolveToolName(service, action, explicit string, t graph.Transport) (string, error) {
	name := explicit
	if name == "" {
		name = ToolName(service, action)
	}
	if t == graph.CLI {
		return name, nil
	}
	if explicit == "" && !hasASCIIAlnum(service) {
		return name, fmt.Errorf("service %q has no ASCII letter or digit, so the derived tool name %q of %s.%s is meaningless: declare tool.name", service, name, service, action)
	}
	if err := ValidToolName(name); err != nil {
		return name, err
	}
	return name, nil
}

func replaceOutside(s string, keepHyphen bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		case r == '-' && keepHyphen:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func singularService(svc string) string {
	i := strings.LastIndexByte(svc, '_')
	return svc[:i+1] + singular(svc[i+1:])
}

func singular(w string) string {
	switch {
	case singularExceptions[strings.ToLower(w)]:
		return w
	case strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ss"):
		return w
	case strings.HasSuffix(w, "s") && len(w) > 1:
		// A one-letter "s" stays: singularising must leave a word.
		return w[:len(w)-1]
	}
	return w
}

func camelToSnake(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			b.WriteRune(r - 'A' + 'a')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hasASCIIAlnum(s string) bool {
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return true
		}
	}
	return false
}
