package cueschema

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

// adversarial are schemas whose translation once took seconds to minutes
// (or overflowed the stack): nested unions with defaults and optional
// arms, where each level's arms were translated twice and their schemas
// copied into the level above. Each must now be translated or refused
// quickly.
func adversarial() map[string]string {
	nest := func(n int, format, leaf string) string {
		e := leaf
		for i := 0; i < n; i++ {
			e = strings.ReplaceAll(strings.ReplaceAll(format, "E", e), "I", fmt.Sprint(i))
		}
		return e
	}
	return map[string]string{
		// The issue's own: a default arm the other arm subsumes.
		"default-struct-arm": "#S: {o: *{a: 1} | {a: int}}",
		// Linear text, a union per level.
		"nested-unions": "#S: " + nest(16, "{aI: E} | {bI?: int, cI?: int}", "{z: int}"),
		// Text doubling per level: defaults and optional arms.
		"nested-defaults":  "#S: " + nest(8, "*{a: E} | {b: E}", "int"),
		"nested-optionals": "#S: " + nest(8, "{a?: E} | {b?: E}", "{z?: int}"),
		"deep-optionals":   "#S: " + nest(12, "{a?: E} | {b?: E}", "{z?: int}"),
		// (Values CUE itself takes exponential time to evaluate are the
		// compiler's watchdog's: pkg/compile TestWorstInputsAnswerQuickly.)
		// An enum larger than a struct union may be (and still fine).
		"big-enum": func() string {
			var arms []string
			for i := 0; i < 2000; i++ {
				arms = append(arms, fmt.Sprintf("%q", fmt.Sprintf("v%d", i)))
			}
			return "#S: {e: " + strings.Join(arms, " | ") + "}"
		}(),
	}
}

// TestBoundedWork: every adversarial schema is translated, or refused with
// a positioned refusal, and no translation visits more than maxSteps
// values. Each takes a fraction of a second on a quiet machine (they took
// 30 s and more); the time bound, 5 s (50 under the race detector), only
// catches such a regression on a busy one.
func TestBoundedWork(t *testing.T) {
	limit := 5 * time.Second
	if raceEnabled {
		limit *= 10
	}
	for name, src := range adversarial() {
		t.Run(name, func(t *testing.T) {
			ctx := cuecontext.New()
			v := ctx.CompileString(src, cue.Filename("s.cue"))
			s := v.LookupPath(cue.ParsePath("#S"))
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			tr := New(nil)
			start := time.Now()
			_, err := tr.Schema(s)
			took := time.Since(start)
			var terr *Error
			switch {
			case err == nil:
			case errors.As(err, &terr):
				for _, r := range terr.Refusals {
					if !r.Pos.IsValid() || r.Hint == "" {
						t.Errorf("refusal without a position or a hint: %v", r)
					}
				}
			default:
				t.Fatal(err)
			}
			if tr.steps > 2*maxSteps {
				t.Errorf("visited %d values (bound %d)", tr.steps, maxSteps)
			}
			if took > limit {
				t.Errorf("took %v (bound %v)", took, limit)
			}
			t.Logf("%v, %d values, err=%v", took, tr.steps, err != nil)
		})
	}
}
