package cueschema

import (
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

// TestWarnings: constructs translated with CUE's exact meaning that their
// author most likely did not mean are reported, positioned, with the
// rewrite that works.
func TestWarnings(t *testing.T) {
	for _, tc := range []struct {
		name, src, path, rule string
		line, col             int
		want                  []string
	}{
		{
			name: "optional-field-reference",
			src:  "#Book: {year?: int & >=1450}\n#S: {title: string, year?: #Book.year}\n",
			path: "year?", rule: "optional-field-reference", line: 2, col: 21,
			want: []string{"year refers to the optional field #Book.year", "can never be given", "#Year: int & >=1450", "year?: #Year"},
		},
		{
			name: "required-field-reference",
			src:  "#Member: {name!: string & !=\"\"}\n#S: {n: string, name?: #Member.name}\n",
			path: "name?", rule: "required-field-reference", line: 2, col: 17,
			want: []string{"name refers to the required field #Member.name", "required field missing", "can never be given", "#Name: string & !=\"\"", "name!: #Name"},
		},
		{
			name: "bytes",
			src:  "#S: {n: int, b?: bytes}\n",
			path: "b?", rule: "bytes", line: 1, col: 14,
			want: []string{"b is bytes", "no JSON value is bytes", "refuses every value", "base64"},
		},
		{
			name: "default-from-field",
			src:  "#S: {a: int, b: *a | int}\n",
			path: "b", rule: "default-from-field", line: 1, col: 14,
			want: []string{"the default of b copies a", "the runner does not fill it in"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []*Warning
			tr := New(&Options{Warn: func(w *Warning) { got = append(got, w) }})
			v := cuecontext.New().CompileString(tc.src, cue.Filename("s.cue"))
			if _, err := tr.Schema(v.LookupPath(cue.ParsePath("#S"))); err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				t.Fatal("no warning")
			}
			w := got[0]
			text := w.Message + " | " + w.Hint
			for _, s := range tc.want {
				if !strings.Contains(text, s) {
					t.Errorf("warning %q lacks %q", text, s)
				}
			}
			if w.Path != tc.path || w.Rule != tc.rule || w.Pos.Line() != tc.line || w.Pos.Column() != tc.col {
				t.Errorf("warning at %v path %q rule %q, want %d:%d %q %q", w.Pos, w.Path, w.Rule, tc.line, tc.col, tc.path, tc.rule)
			}
		})
	}
}
