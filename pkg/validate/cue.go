package validate

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/message"
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
//     CUE's int64, uint64, int128, uint128, float64 and float32.
//
// Compile rewrites the document it is given into private keywords of one
// vocabulary before santhosh-tekuri/jsonschema compiles it.

const (
	kwInteger = "stitchkit-integer"
	kwUnique  = "stitchkit-unique-items"
	vocabURL  = "https://stitchkit.dev/vocab/cue"
)

// rewrite returns a copy of schema s with the CUE readings applied.
func rewrite(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		switch k {
		case "properties", "patternProperties", "$defs", "dependentSchemas", "definitions":
			if sub, ok := v.(map[string]any); ok {
				n := make(map[string]any, len(sub))
				for name, e := range sub {
					n[name] = rewrite(e)
				}
				out[k] = n
				continue
			}
		case "allOf", "anyOf", "oneOf", "prefixItems":
			if sub, ok := v.([]any); ok {
				n := make([]any, len(sub))
				for i, e := range sub {
					n[i] = rewrite(e)
				}
				out[k] = n
				continue
			}
		case "items", "additionalProperties", "contains", "not", "if", "then", "else", "propertyNames", "unevaluatedProperties", "unevaluatedItems":
			out[k] = rewrite(v)
			continue
		case "type":
			out[k] = v
			switch t := v.(type) {
			case string:
				if t == "integer" {
					out[k] = "number"
					out[kwInteger] = true
				}
			case []any:
				if slices.Contains(t, any("integer")) && !slices.Contains(t, any("number")) {
					n := slices.Clone(t)
					for i, e := range n {
						if e == "integer" {
							n[i] = "number"
						}
					}
					out[k] = n
					out[kwInteger] = true
				}
			}
			continue
		case "uniqueItems":
			if v == true {
				out[kwUnique] = true
				continue
			}
		}
		out[k] = v
	}
	return out
}

func cueVocabulary() *jsonschema.Vocabulary {
	meta, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"properties":{"` + kwInteger + `":{"type":"boolean"},"` + kwUnique + `":{"type":"boolean"}}}`))
	if err != nil {
		panic(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(vocabURL, meta); err != nil {
		panic(err)
	}
	sch, err := c.Compile(vocabURL)
	if err != nil {
		panic(err)
	}
	return &jsonschema.Vocabulary{
		URL:    vocabURL,
		Schema: sch,
		Compile: func(_ *jsonschema.CompilerContext, obj map[string]any) (jsonschema.SchemaExt, error) {
			ext := &cueKeywords{integer: obj[kwInteger] == true, unique: obj[kwUnique] == true}
			if !ext.integer && !ext.unique {
				return nil, nil
			}
			return ext, nil
		},
	}
}

type cueKeywords struct{ integer, unique bool }

func (k *cueKeywords) Validate(ctx *jsonschema.ValidatorContext, v any) {
	if k.integer && isNumber(v) && !isIntLiteral(v) {
		ctx.AddError(&integerError{got: fmt.Sprint(v)})
	}
	if k.unique {
		if arr, ok := v.([]any); ok {
			for i := 1; i < len(arr); i++ {
				for j := 0; j < i; j++ {
					if cueEqual(arr[i], arr[j]) {
						ctx.AddError(&uniqueError{i: j, j: i})
						return
					}
				}
			}
		}
	}
}

type integerError struct{ got string }

func (*integerError) KeywordPath() []string { return []string{"type"} }
func (e *integerError) LocalizedString(*message.Printer) string {
	return fmt.Sprintf("must be an integer, written without a fraction or exponent (got %s)", e.got)
}

type uniqueError struct{ i, j int }

func (*uniqueError) KeywordPath() []string { return []string{"uniqueItems"} }
func (e *uniqueError) LocalizedString(*message.Printer) string {
	return fmt.Sprintf("items at %d and %d are equal; items must be unique", e.i, e.j)
}

func isNumber(v any) bool {
	switch v.(type) {
	case json.Number, float32, float64, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	}
	return false
}

// isIntLiteral reports whether the number v is an integer as CUE reads
// JSON: a literal without fraction or exponent. Go floats (values not from
// DecodeJSON) count when integral.
func isIntLiteral(v any) bool {
	switch x := v.(type) {
	case json.Number:
		return !strings.ContainsAny(string(x), ".eE")
	case float64:
		return x == math.Trunc(x) && !math.IsInf(x, 0)
	case float32:
		return float64(x) == math.Trunc(float64(x))
	}
	return true
}

// cueEqual is CUE's equality of two JSON values: numbers of different
// kinds (int, float) differ.
func cueEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !cueEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !cueEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	if isNumber(a) && isNumber(b) {
		if isIntLiteral(a) != isIntLiteral(b) {
			return false
		}
		ra, ok1 := toRat(a)
		rb, ok2 := toRat(b)
		return ok1 && ok2 && ra.Cmp(rb) == 0
	}
	return false
}

func toRat(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case json.Number:
		if !numberSafe(string(x)) {
			return nil, false
		}
		return new(big.Rat).SetString(string(x))
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, false
		}
		return new(big.Rat).SetFloat64(x), true
	}
	return new(big.Rat).SetString(fmt.Sprint(v))
}

// maxExponent bounds the decimal exponent of a number this package
// computes with exactly (see DecodeJSON).
const maxExponent = 10000

// numberSafe reports whether the JSON number text s can be turned into an
// exact rational without a huge allocation.
func numberSafe(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return len(s) <= 2*maxExponent
	}
	exp := s[i+1:]
	exp = strings.TrimLeft(exp, "+-")
	exp = strings.TrimLeft(exp, "0")
	return len(exp) <= 5 && (len(exp) < 5 || exp <= fmt.Sprint(maxExponent))
}

var (
	int64Min   = new(big.Rat).SetInt(new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 63)))
	int64Max   = new(big.Rat).SetInt(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 63), big.NewInt(1)))
	uint64Max  = new(big.Rat).SetInt(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1)))
	int128Min  = new(big.Rat).SetInt(new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 127)))
	int128Max  = new(big.Rat).SetInt(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(1)))
	uint128Max = new(big.Rat).SetInt(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1)))
	doubleMax  = mustRat("1.797693134862315708145274237317043567981e+308")
	floatMax   = mustRat("3.40282346638528859811704183484516925440e+38")
)

func mustRat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

func rangeFormat(name string, lo, hi *big.Rat) *jsonschema.Format {
	return &jsonschema.Format{Name: name, Validate: func(v any) error {
		if !isNumber(v) {
			return nil
		}
		r, ok := toRat(v)
		if !ok {
			return fmt.Errorf("not a number within %s", name)
		}
		if lo != nil && r.Cmp(lo) < 0 || r.Cmp(hi) > 0 {
			l := "-" + hi.FloatString(0)
			if lo != nil {
				l = lo.RatString()
			} else {
				l = "0"
			}
			return fmt.Errorf("out of the %s range [%s, %s]", name, l, hi.RatString())
		}
		return nil
	}}
}

func timeFormat(name, layout string) *jsonschema.Format {
	return &jsonschema.Format{Name: name, Validate: func(v any) error {
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

// goTimeFormats registers a go-time:LAYOUT format for every such format
// the document uses.
func goTimeFormats(s any, c *jsonschema.Compiler, seen map[string]bool) {
	switch x := s.(type) {
	case map[string]any:
		for k, v := range x {
			if k == "const" || k == "enum" || k == "default" || k == "examples" {
				continue
			}
			if f, ok := v.(string); ok && k == "format" && strings.HasPrefix(f, "go-time:") && !seen[f] {
				seen[f] = true
				c.RegisterFormat(timeFormat(f, strings.TrimPrefix(f, "go-time:")))
			}
			goTimeFormats(v, c, seen)
		}
	case []any:
		for _, e := range x {
			goTimeFormats(e, c, seen)
		}
	}
}
