package validate

import (
	"fmt"
	"strings"
	"time"

	"stitchkit.dev/stitchkit/pkg/validate/internal/engine"
)

// CUE's meaning of the keywords the translator emits, where it is not the
// JSON Schema default (the schema bytes stay standard JSON Schema; this is
// how this package reads them):
//
//   - "type": "integer" accepts an integer literal only: CUE's int refuses
//     1.0 and 1e2, which JSON Schema calls integers. A float is emitted as
//     {"type": "number", "not": {"type": "integer"}}, so it accepts 1.0 and
//     refuses 1, as CUE's float does.
//   - "uniqueItems" compares items as CUE does: 1 and 1.0 differ (int and
//     float), 1.0 and 1.00 do not.
//   - formats: "date-time" is Go's time.Parse(time.RFC3339Nano) (CUE's
//     time.Time), "date" is time.Parse(time.DateOnly), "go-time:LAYOUT" is
//     time.Parse(LAYOUT) (CUE's time.Format(LAYOUT)); "int64", "uint64",
//     "int128", "uint128", "double" and "float" are the exact ranges of
//     CUE's int64, uint64, int128, uint128, float64 and float32, and
//     NAME-lower and NAME-upper one bound of them (int & <= 2^63-1);
//     "decimal" OP NUMBER (decimal==12345678901234567890, decimal<=1e400)
//     compares exactly with a number canonical JSON cannot write.
//
// The first two are options of the engine (engine.Options.IntegerLiterals
// and UniqueKinds), the formats are the table in formats.go.
var cueReading = engine.Options{Format: formatFor, IntegerLiterals: true, UniqueKinds: true}

// rangeFormat asserts that a number lies in [lo, hi] (lo or hi "" for
// no bound on that side), compared exactly on the number's text.
func rangeFormat(name, lo, hi string) *format {
	var low, hiN engine.Number
	if lo != "" {
		low = mustNumber(lo)
	}
	if hi != "" {
		hiN = mustNumber(hi)
	}
	what := fmt.Sprintf("range [%s, %s]", lo, hi)
	switch {
	case lo == "":
		what = "range (<= " + hi + ")"
	case hi == "":
		what = "range (>= " + lo + ")"
	}
	return &format{Name: name, Validate: func(v any) error {
		if lo != "" {
			c, isNum := engine.CompareValue(v, low)
			if !isNum {
				return nil
			}
			if c < 0 {
				return fmt.Errorf("out of the %s %s", name, what)
			}
		}
		if hi != "" {
			c, isNum := engine.CompareValue(v, hiN)
			if !isNum {
				return nil
			}
			if c > 0 {
				return fmt.Errorf("out of the %s %s", name, what)
			}
		}
		return nil
	}}
}

func mustNumber(s string) engine.Number {
	n, ok := engine.ParseNumber(s)
	if !ok {
		panic("validate: bad range bound " + s)
	}
	return n
}

func timeFormat(name, layout string) *format {
	return &format{Name: name, Validate: func(v any) error {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		if _, err := time.ParseInLocation(layout, s, time.UTC); err != nil {
			return fmt.Errorf("not a time in the layout %q", layout)
		}
		return nil
	}}
}

// formatFor is the engine's format lookup: the table, and go-time:LAYOUT
// for any layout (CUE's time.Format(LAYOUT)).
func formatFor(name string) (engine.Format, bool) {
	for _, f := range formats {
		if f.Name == name {
			return f.Validate, true
		}
	}
	if layout, ok := strings.CutPrefix(name, "go-time:"); ok {
		return timeFormat(name, layout).Validate, true
	}
	if rest, ok := strings.CutPrefix(name, "decimal"); ok {
		return decimalFormat(name, rest)
	}
	return nil, false
}

// decimalFormat reads "decimal" OP NUMBER (OP one of == >= > <= <): a
// number compared exactly with a constant or bound canonical JSON (IEEE
// doubles) cannot write (12345678901234567890, 1e400, 0.1000000000000000001).
// Values of other kinds pass.
func decimalFormat(name, rest string) (engine.Format, bool) {
	var op string
	for _, o := range []string{"==", ">=", "<=", ">", "<"} {
		if strings.HasPrefix(rest, o) {
			op = o
			break
		}
	}
	n, ok := engine.ParseNumber(strings.TrimPrefix(rest, op))
	if op == "" || !ok {
		return nil, false
	}
	text := strings.TrimPrefix(rest, op)
	return func(v any) error {
		c, isNum := engine.CompareValue(v, n)
		if !isNum {
			return nil
		}
		var good bool
		switch op {
		case "==":
			good = c == 0
		case ">=":
			good = c >= 0
		case ">":
			good = c > 0
		case "<=":
			good = c <= 0
		case "<":
			good = c < 0
		}
		if !good {
			if op == "==" {
				return fmt.Errorf("not %s", text)
			}
			return fmt.Errorf("not %s %s", op, text)
		}
		return nil
	}, true
}
