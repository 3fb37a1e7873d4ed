package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// The -update flag. Every test binary that links this package gets it:
// `go test -update` makes [AssertManifestSnapshot] rewrite snapshots. A
// flag can be defined only once per binary, so a test package that links
// conformance must not define its own -update; it reads [Update] instead.
// Binaries not built by `go test` get no flag.
func init() {
	if testing.Testing() && flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files (surface manifest snapshots) instead of comparing them")
	}
}

// Update reports whether the test binary runs with -update.
func Update() bool {
	f := flag.Lookup("update")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	b, _ := g.Get().(bool)
	return b
}

// MaxDiffBytes caps the drift report of [CompareManifest].
const MaxDiffBytes = 4096

// AssertManifestSnapshot compares m with the snapshot at path and fails t
// with a field-path diff (capped at [MaxDiffBytes]) when they differ. With
// -update it writes m to path instead. A snapshot of another
// manifestVersion fails with a message to regenerate and review it.
func AssertManifestSnapshot(t testing.TB, m *Manifest, path string) {
	t.Helper()
	got, err := m.Encode()
	if err != nil {
		t.Fatalf("surface manifest: %v", err)
	}
	if Update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("surface manifest: %v", err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("surface manifest: %v", err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("surface manifest snapshot %s does not exist: run `go test -update` and commit it", path)
	}
	if err != nil {
		t.Fatalf("surface manifest: %v", err)
	}
	want, err := DecodeManifest(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if diff, equal := CompareManifest(want, m); !equal {
		t.Errorf("Surface manifest diverged from its committed snapshot %s (-snapshot +built):\n%s\nIf the change is intended, run `go test -update` and review the diff.", path, diff)
	}
}

// CompareManifest compares two manifests by their canonical bytes. When
// they differ, diff lists each changed field by its path — operation,
// surface, tool, realtime event, field — as
//
//	-path: snapshot value
//	+path: built value
//
// in path order, capped at [MaxDiffBytes].
func CompareManifest(want, got *Manifest) (diff string, equal bool) {
	wb, werr := want.Canonical()
	gb, gerr := got.Canonical()
	if werr == nil && gerr == nil && bytes.Equal(wb, gb) {
		return "", true
	}
	if werr != nil || gerr != nil {
		return fmt.Sprintf("cannot encode manifest: %v", errors.Join(werr, gerr)), false
	}
	var r diffReporter
	cmp.Equal(keyed(wb), keyed(gb), cmp.Reporter(&r))
	out := r.String()
	if out == "" {
		out = "manifests differ in encoding only"
	}
	return capDiff(out, MaxDiffBytes), false
}

// keyed turns canonical manifest bytes into nested maps in which every list
// of rows is keyed by the row's identity, so a diff names the operation,
// surface, tool or event rather than an index.
func keyed(canonical []byte) map[string]any {
	var tree map[string]any
	dec := json.NewDecoder(bytes.NewReader(canonical))
	dec.UseNumber()
	_ = dec.Decode(&tree)
	str := func(m map[string]any, k string) string {
		if s, ok := m[k].(string); ok {
			return s
		}
		if m[k] == nil {
			return ""
		}
		return fmt.Sprint(m[k])
	}
	byKey := func(list any, key func(map[string]any) string, inner func(map[string]any)) rows {
		out := rows{}
		rows, _ := list.([]any)
		for i, row := range rows {
			m, ok := row.(map[string]any)
			if !ok {
				out[fmt.Sprintf("[%d]", i)] = row
				continue
			}
			if inner != nil {
				inner(m)
			}
			k := "[" + key(m) + "]"
			if _, dup := out[k]; dup {
				k = fmt.Sprintf("%s#%d", k, i)
			}
			out[k] = m
		}
		return out
	}
	set := func(list any, key func(any) string) rowSet {
		out := rowSet{}
		rows, _ := list.([]any)
		for _, row := range rows {
			out["["+key(row)+"]"] = member{}
		}
		return out
	}
	tree["operations"] = byKey(tree["operations"], func(m map[string]any) string {
		return str(m, "kind") + " " + str(m, "service") + "." + str(m, "action")
	}, func(m map[string]any) {
		m["http"] = set(m["http"], func(r any) string {
			rm, _ := r.(map[string]any)
			return str(rm, "method") + " " + str(rm, "path")
		})
	})
	tree["toolSurfaces"] = byKey(tree["toolSurfaces"], func(m map[string]any) string {
		if s := str(m, "surface"); s != "" {
			return str(m, "transport") + " " + s
		}
		return str(m, "transport") + " (default)"
	}, func(m map[string]any) {
		m["tools"] = byKey(m["tools"], func(t map[string]any) string { return str(t, "name") }, nil)
	})
	tree["realtimeContracts"] = set(tree["realtimeContracts"], func(r any) string { return fmt.Sprint(r) })
	tree["realtime"] = byKey(tree["realtime"], func(m map[string]any) string {
		return str(m, "contract") + " " + str(m, "direction") + " " + str(m, "event")
	}, nil)
	tree["cliOnly"] = byKey(tree["cliOnly"], func(m map[string]any) string { return str(m, "name") }, nil)
	tree["extensions"] = set(tree["extensions"], func(r any) string {
		rm, _ := r.(map[string]any)
		return str(rm, "transport") + " " + str(rm, "name")
	})
	return tree
}

// diffReporter is a go-cmp reporter that records each differing leaf with
// its path.
type diffReporter struct {
	path  cmp.Path
	lines []string
}

func (r *diffReporter) PushStep(ps cmp.PathStep) { r.path = append(r.path, ps) }
func (r *diffReporter) PopStep()                 { r.path = r.path[:len(r.path)-1] }

func (r *diffReporter) Report(rs cmp.Result) {
	if rs.Equal() {
		return
	}
	vx, vy := r.path.Last().Values()
	if mi, ok := r.path.Last().(cmp.MapIndex); ok && mi.Type() == reflect.TypeFor[member]() {
		// A set member added or removed: "+operations[contract t.get].http: GET /t/{id}".
		p := formatPath(r.path[:len(r.path)-1])
		k := strings.TrimSuffix(strings.TrimPrefix(fmt.Sprint(mi.Key().Interface()), "["), "]")
		if vx.IsValid() {
			r.lines = append(r.lines, "-"+p+": "+k)
		}
		if vy.IsValid() {
			r.lines = append(r.lines, "+"+p+": "+k)
		}
		return
	}
	p := formatPath(r.path)
	if vx.IsValid() {
		r.lines = append(r.lines, "-"+p+": "+formatValue(vx.Interface()))
	}
	if vy.IsValid() {
		r.lines = append(r.lines, "+"+p+": "+formatValue(vy.Interface()))
	}
}

func (r *diffReporter) String() string { return strings.Join(r.lines, "\n") }

// formatPath renders map keys as a dotted path; row keys are already
// bracketed ("operations[contract tasks.get].schemas.input").
func formatPath(p cmp.Path) string {
	var b strings.Builder
	for _, step := range p {
		mi, ok := step.(cmp.MapIndex)
		if !ok {
			continue
		}
		k := fmt.Sprint(mi.Key().Interface())
		if !strings.HasPrefix(k, "[") && b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(k)
	}
	if b.Len() == 0 {
		return "(manifest)"
	}
	return b.String()
}

// rows are manifest rows keyed by identity ("[GET /items/{id}]"); rowSet
// is a list of plain values (HTTP rows, extensions, realtime contract names)
// kept as a set of its members' labels. Both render as readable lists.
type (
	rows   map[string]any
	rowSet map[string]member
	member struct{}
)

// readable turns a keyed tree back into plain JSON values: rows become
// lists of rows in key order, sets lists of their labels ("GET /address").
func readable(v any) any {
	switch x := v.(type) {
	case rows:
		out := make([]any, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, readable(x[k]))
		}
		return out
	case rowSet:
		out := make([]any, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(k, "["), "]"))
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = readable(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = readable(e)
		}
		return out
	}
	return v
}

func formatValue(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(readable(v)); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// capDiff truncates s to at most max bytes at a line or rune boundary,
// saying how much was left out.
func capDiff(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const note = "\n… diff truncated (%d more bytes)"
	cut := max - len(note) - 8
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if nl := strings.LastIndexByte(s[:cut], '\n'); nl > 0 {
		cut = nl
	}
	return s[:cut] + fmt.Sprintf(note, len(s)-cut)
}
