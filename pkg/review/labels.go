package review

import (
	"strconv"
	"strings"

	"stitchkit.dev/stitchkit/internal/schematree"
)

// unitNames name the root of each schema slot in messages.
var unitNames = map[string]string{
	"params":          "path parameters",
	"query":           "query",
	"input":           "request body",
	"output":          "response",
	"args":            "arguments",
	"ack":             "acknowledgement",
	"advertisedInput": "advertised input",
}

// fieldLabel names the value a JSON pointer (relative to the root of unit,
// or of definition def when def is set) points at, the way a reader finds
// it in the contract: "amount.currency", "items[].status", "argument 2",
// "#Payment.status". Keywords at the end of the pointer are dropped.
func fieldLabel(unit, def, ptr string) string {
	var b strings.Builder
	if def != "" {
		b.WriteString("#" + def)
	}
	toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	if ptr == "" {
		toks = nil
	}
	dot := func(name string) {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(name)
	}
	for i := 0; i < len(toks); i++ {
		k := schematree.Unescape(toks[i])
		switch {
		case k == "prefixItems" && i+1 < len(toks):
			n, _ := strconv.Atoi(toks[i+1])
			if b.Len() == 0 && unit == "args" {
				b.WriteString("argument " + strconv.Itoa(n+1))
			} else {
				if b.Len() == 0 {
					b.WriteString(unitRoot(unit))
				}
				b.WriteString("[" + toks[i+1] + "]")
			}
			i++
		case k == "additionalProperties":
			if i+1 < len(toks) {
				dot("*") // the schema of undeclared fields
			}
		case k == "items" || k == "additionalItems" || k == "contains":
			if b.Len() == 0 {
				b.WriteString(unitRoot(unit))
			}
			b.WriteString("[]")
		case schematree.KeywordKind(k) == schematree.Map && i+1 < len(toks):
			if k != "$defs" && k != "definitions" {
				dot(schematree.Unescape(toks[i+1]))
			}
			i++
		case schematree.KeywordKind(k) == schematree.List:
			i++ // a branch keeps the name of the value
		}
	}
	if b.Len() == 0 {
		return unitRoot(unit)
	}
	return b.String()
}

func unitRoot(unit string) string {
	if n, ok := unitNames[unit]; ok {
		return n
	}
	if unit == "" {
		return "value"
	}
	return unit
}

// ordinal returns "1st", "2nd", "3rd", "4th", ….
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}
