package compile

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The contract body shared by the root forms below.
const closedBody = `	name:    "c"
	version: "1.0.0"
	services: books: operations: list: {method: "GET", path: "/", desc: "List books", #output: #Book}
	surfaces: agent: include: ["books.list"]
`

// TestRootForms: the recommended form, a bare embedding and a package split
// over files compile to the same bytes; the graph depends on meaning only.
func TestRootForms(t *testing.T) {
	const imp = "package c\n\nimport \"stitchkit.dev/stitchkit/schema\"\n\n#Book: {id: string}\n\n"
	forms := map[string]map[string][]byte{
		"and": {"c.cue": []byte(imp + "schema.#Contract & {\n" + closedBody + "}\n")},
		"bare": {"c.cue": []byte(imp + "schema.#Contract\n\n" +
			strings.ReplaceAll(closedBody, "\t", ""))},
		"split": {
			"c.cue":    []byte(imp + "schema.#Contract\n\nname: \"c\"\nversion: \"1.0.0\"\n"),
			"more.cue": []byte("package c\n\n" + strings.ReplaceAll(closedBody, "\t", "")[len("name:    \"c\"\nversion: \"1.0.0\"\n"):]),
		},
	}
	var want []byte
	for _, name := range []string{"and", "bare", "split"} {
		g, err := compileFiles(context.Background(), forms[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := g.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = b
		} else if !bytes.Equal(b, want) {
			t.Errorf("%s form compiles to different bytes", name)
		}
	}
}

// TestClosedWhateverTheForm: unknown fields are refused in every root form,
// at the user's label, and a misspelt key gets a suggestion.
func TestClosedWhateverTheForm(t *testing.T) {
	for name, src := range map[string]string{
		"and":  header + "\tservcies: {}\n\tservices: b: operations: l: {method: \"GET\", path: \"/\", desc: \"d\", toolName: \"x\"}\n}\n",
		"bare": "package c\n\nimport \"stitchkit.dev/stitchkit/schema\"\n\nschema.#Contract\n\nname: \"c\"\nversion: \"1.0.0\"\nservcies: {}\nservices: b: operations: l: {method: \"GET\", path: \"/\", desc: \"d\", toolName: \"x\"}\n",
	} {
		ds := compileSrc(t, src)
		var got []string
		for _, d := range ds {
			got = append(got, d.Message)
		}
		joined := strings.Join(got, "\n")
		if !strings.Contains(joined, `servcies: field not allowed (did you mean "services"?)`) {
			t.Errorf("%s: no suggestion for servcies:\n%s", name, joined)
		}
		if name == "bare" && !strings.Contains(joined, "services.b.operations.l.toolName: field not allowed") {
			t.Errorf("%s: toolName not refused:\n%s", name, joined)
		}
		for _, d := range ds {
			if d.Pos.File != "c.cue" {
				t.Errorf("%s: %v is not in the user's file", name, d)
			}
		}
	}
}

func TestContractRootRequired(t *testing.T) {
	ds := compileSrc(t, "package c\n\nname: \"c\"\nversion: \"1.0.0\"\n")
	if len(ds) != 1 || ds[0].Rule != "contract-root" || ds[0].Pos.Line != 1 ||
		!strings.Contains(ds[0].Message, "contract root must unify with schema.#Contract") {
		t.Errorf("diagnostics %v", ds)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"servcies", "services", 1}, {"", "abc", 3}, {"tol", "tool", 1}, {"exampels", "examples", 1}, {"abc", "abc", 0}, {"kitten", "sitting", 3}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
