package cueschema

import (
	"encoding/json"
	"math/big"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	cuejson "cuelang.org/go/encoding/json"

	"stitchkit.dev/stitchkit/pkg/validate"
)

// Every differential check judges an instance the way a request reaches a
// handler, on both sides:
//
//   - CUE reads the bytes as JSON (encoding/json.Extract, as cue vet
//     reads a .json file), unifies them with the schema and accepts when
//     the result is free of errors and concrete once defaults are taken;
//     what it accepts, it completes (the value exported).
//   - stitchkit decodes with validate.DecodeJSON, fills in defaults with
//     ApplyDefaults and validates, exactly as the mounts call them
//     (pkg/mount/call.go); what it accepts is the value a handler gets.
//
// A decode error is a refusal on either side (a mount answers 400).

// cueVerdict is CUE's judgement of one instance: accepted, and then the
// completed value as JSON.
type cueVerdict struct {
	ok    bool
	value []byte
}

func cueJudge(ctx *cue.Context, s cue.Value, instance []byte) cueVerdict {
	e, err := cuejson.Extract("instance.json", instance)
	if err != nil {
		return cueVerdict{}
	}
	x := ctx.BuildExpr(e)
	if x.Err() != nil {
		return cueVerdict{}
	}
	u := s.Unify(x)
	if u.Validate(cue.Concrete(true)) != nil {
		return cueVerdict{}
	}
	b, err := u.MarshalJSON()
	if err != nil {
		return cueVerdict{}
	}
	return cueVerdict{ok: true, value: b}
}

// ourVerdict is pkg/validate's judgement: accepted, and then the value
// after defaults.
type ourVerdict struct {
	ok    bool
	value any
}

func ourJudge(v *validate.Validator, instance []byte) ourVerdict {
	val, err := validate.DecodeJSON(instance, nil)
	if err != nil {
		return ourVerdict{}
	}
	val, _ = v.ApplyDefaults(val)
	if v.Validate(val) != nil {
		return ourVerdict{}
	}
	return ourVerdict{ok: true, value: val}
}

// sameCompletion reports whether the value a handler gets (got) is CUE's
// completion (want, JSON), numbers compared by value and by kind (1 is
// not 1.0: a float default filled in as an integer is a difference), and
// but for members CUE leaves out that the runner fills in from an
// optional field's default (see TestDefaultsMatchCUE).
func sameCompletion(got any, want []byte, schema []byte) bool {
	w, err := validate.DecodeJSON(want, &validate.DecodeOptions{MaxDepth: 10000})
	if err != nil {
		return false
	}
	if sameJSON(got, w) {
		return true
	}
	var s any
	if json.Unmarshal(schema, &s) != nil {
		return false
	}
	return extraDefaults(got, w, s)
}

// sameJSON compares two decoded JSON values; numbers are equal when their
// values are and both are integer literals or neither is.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !sameJSON(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, sameJSON)
	case json.Number:
		y, ok := b.(json.Number)
		if !ok || intLiteral(x) != intLiteral(y) {
			return false
		}
		rx, ok1 := new(big.Rat).SetString(string(x))
		ry, ok2 := new(big.Rat).SetString(string(y))
		return ok1 && ok2 && rx.Cmp(ry) == 0
	}
	return a == b
}

func intLiteral(n json.Number) bool { return !strings.ContainsAny(string(n), ".eE") }
