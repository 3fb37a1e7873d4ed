package gen

import (
	"fmt"
	"go/token"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// initialisms are written in upper case inside Go names (the list Go's own
// linters use), so "id" becomes ID and "taskUrl" TaskURL.
var initialisms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "CPU": true, "CSS": true, "DNS": true,
	"EOF": true, "GUID": true, "HTML": true, "HTTP": true, "HTTPS": true, "ID": true,
	"IP": true, "JSON": true, "LHS": true, "OK": true, "QPS": true, "RAM": true, "RHS": true,
	"RPC": true, "SLA": true, "SMTP": true, "SQL": true, "SSH": true, "TCP": true,
	"TLS": true, "TTL": true, "UDP": true, "UI": true, "UID": true, "UUID": true,
	"URI": true, "URL": true, "UTF8": true, "VM": true, "XML": true, "XMPP": true,
	"XSRF": true, "XSS": true,
}

// exportName turns any JSON name (a property, a definition, an action, an
// enum value) into an exported Go identifier: words are split at
// separators and at lower→upper case changes, each word is capitalised (or
// upper-cased when it is an initialism), and characters Go does not allow
// are dropped. A name that cannot start an exported identifier gets an "X"
// prefix ("123start" → X123start); an empty result is "X".
func exportName(s string) string {
	var b strings.Builder
	for _, w := range splitWords(s) {
		if up := strings.ToUpper(w); initialisms[up] {
			b.WriteString(up)
			continue
		}
		r, n := utf8.DecodeRuneInString(w)
		b.WriteRune(unicode.ToUpper(r))
		b.WriteString(w[n:])
	}
	out := b.String()
	if out == "" {
		return "X"
	}
	if r, _ := utf8.DecodeRuneInString(out); !unicode.IsUpper(r) {
		out = "X" + out
	}
	if !token.IsIdentifier(out) {
		return "X"
	}
	return out
}

// splitWords splits s into words of letters and digits. Anything else
// separates words, and so does a lower-case letter or digit followed by an
// upper-case letter ("taskId" → task, Id).
func splitWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && len(cur) > 0 && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return words
}

// namespace hands out unique identifiers: the first claim of a name gets
// it, later ones get the smallest numeric suffix not taken (Name2, Name3).
// Claims happen in graph order, so the result is deterministic.
type namespace struct {
	taken map[string]bool
	// owner says what holds a name claimed with claimFixed.
	owner map[string]string
}

func newNamespace(reserved ...string) *namespace {
	ns := &namespace{taken: map[string]bool{}, owner: map[string]string{}}
	for _, r := range reserved {
		ns.taken[r] = true
		ns.owner[r] = "an identifier of the generated package"
	}
	return ns
}

// claimFixed claims a name that must not move: a definition, an operation
// part, a service interface, an error code. A clash is an error naming
// both owners: a numeric suffix would depend on what else the contract
// holds, and a later edit would rename the type under existing code.
func (ns *namespace) claimFixed(name, what string) (string, error) {
	if ns.taken[name] {
		other := ns.owner[name]
		if other == "" {
			other = "another generated type"
		}
		return "", fmt.Errorf("the Go name %s of %s is already that of %s; rename one of them in the contract", name, what, other)
	}
	ns.taken[name] = true
	ns.owner[name] = what
	return name, nil
}

// claim returns name, or name with a numeric suffix when name is taken.
func (ns *namespace) claim(name string) string {
	if !ns.taken[name] {
		ns.taken[name] = true
		return name
	}
	for i := 2; ; i++ {
		n := name + strconv.Itoa(i)
		if !ns.taken[n] {
			ns.taken[n] = true
			return n
		}
	}
}

// validTagName reports whether encoding/json uses name as written when it
// is the name in a `json:"..."` struct tag. Other names (empty, or with
// quotes, backslashes, commas, backquotes or control characters) would make
// encoding/json fall back to the Go field name, so a struct cannot carry
// them.
func validTagName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// packageName turns s into a valid, lower-case Go package name.
func packageName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		}
	}
	out := b.String()
	if out == "" || (out[0] >= '0' && out[0] <= '9') || token.Lookup(out).IsKeyword() {
		out = "api" + out
	}
	return out
}

// goComment formats text as // comment lines (empty when text is blank).
func goComment(text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	var b strings.Builder
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := clean(lines[i])
		if line == "" {
			b.WriteString("//\n")
			continue
		}
		if preformatted(line) {
			b.WriteString("// " + line + "\n")
			continue
		}
		// A paragraph whose source was wrapped at another width is one
		// line of prose again before it is wrapped here.
		for i+1 < len(lines) {
			next := clean(lines[i+1])
			if next == "" || preformatted(next) {
				break
			}
			line += " " + strings.TrimSpace(next)
			i++
		}
		for _, l := range wrap(line, 76) {
			b.WriteString("// " + l + "\n")
		}
	}
	return b.String()
}

// clean drops control characters and trailing space from a comment line.
func clean(line string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\t' {
			return -1
		}
		return r
	}, strings.TrimRight(line, " \t\r"))
}

// preformatted reports whether a comment line is indented code or a list.
func preformatted(line string) bool {
	return strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "- ")
}

// wrap breaks a line of prose at spaces into lines of at most width
// characters (a longer word stays whole).
func wrap(line string, width int) []string {
	var out []string
	for utf8.RuneCountInString(line) > width {
		cut := -1
		n := 0
		for i, r := range line {
			if n > width {
				break
			}
			if r == ' ' {
				cut = i
			}
			n++
		}
		if cut <= 0 {
			break
		}
		out = append(out, line[:cut])
		line = strings.TrimLeft(line[cut:], " ")
	}
	return append(out, line)
}

// PackageName turns s (a directory or contract name) into a valid,
// lower-case Go package name: characters other than letters, digits and _
// are dropped, and a name that would start with a digit, be empty or be a
// Go keyword gets an "api" prefix.
func PackageName(s string) string { return packageName(s) }
