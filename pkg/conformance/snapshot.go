package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxDiffBytes caps the drift report of [CompareManifest].
const MaxDiffBytes = 4096

// CompareManifest compares two manifests by their canonical bytes. When
// they differ, diff lists each changed field by its path — operation,
// surface, tool, realtime event, field — as
//
//	-path: snapshot value
//	+path: built value
//
// in path order, capped at [MaxDiffBytes] ([DiffManifests] gives it whole).
func CompareManifest(want, got *Manifest) (diff string, equal bool) {
	diff, equal = DiffManifests(want, got)
	return capDiff(diff, MaxDiffBytes), equal
}

// DiffManifests is [CompareManifest] without the cap: every changed field,
// for a reader who asked for the whole drift (stitch manifest --check
// --full-diff).
func DiffManifests(want, got *Manifest) (diff string, equal bool) {
	wb, werr := want.Canonical()
	gb, gerr := got.Canonical()
	if werr == nil && gerr == nil && bytes.Equal(wb, gb) {
		return "", true
	}
	if werr != nil || gerr != nil {
		return fmt.Sprintf("cannot encode manifest: %v", errors.Join(werr, gerr)), false
	}
	var r diffReporter
	r.diff(nil, keyed(wb), keyed(gb))
	out := strings.Join(r.lines, "\n")
	if out == "" {
		out = "manifests differ in encoding only"
	}
	return out, false
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

// diffReporter records each differing leaf of two keyed trees with its
// path, walking map keys in byte order so the report is deterministic.
type diffReporter struct {
	lines []string
}

// diff compares x and y at path. Maps (plain, rows, sets) are walked key by
// key; anything else is compared whole and reported as a -/+ pair.
func (r *diffReporter) diff(path []string, x, y any) {
	xm, xok := asMap(x)
	ym, yok := asMap(y)
	if !xok || !yok || reflect.TypeOf(x) != reflect.TypeOf(y) {
		if !reflect.DeepEqual(x, y) {
			r.lines = append(r.lines, "-"+formatPath(path)+": "+formatValue(x), "+"+formatPath(path)+": "+formatValue(y))
		}
		return
	}
	_, isSet := x.(rowSet)
	keys := slices.Sorted(maps.Keys(xm))
	for k := range ym {
		if _, ok := xm[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		xv, inX := xm[k]
		yv, inY := ym[k]
		switch {
		case inX && inY:
			r.diff(append(path, k), xv, yv)
		case isSet:
			// A set member added or removed: "+operations[contract t.get].http: GET /t/{id}".
			label := strings.TrimSuffix(strings.TrimPrefix(k, "["), "]")
			if inX {
				r.lines = append(r.lines, "-"+formatPath(path)+": "+label)
			} else {
				r.lines = append(r.lines, "+"+formatPath(path)+": "+label)
			}
		case inX:
			r.lines = append(r.lines, "-"+formatPath(append(path, k))+": "+formatValue(xv))
		default:
			r.lines = append(r.lines, "+"+formatPath(append(path, k))+": "+formatValue(yv))
		}
	}
}

// asMap views the map kinds of a keyed tree as one type.
func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case rows:
		return m, true
	case rowSet:
		out := make(map[string]any, len(m))
		for k := range m {
			out[k] = member{}
		}
		return out, true
	}
	return nil, false
}

// formatPath renders map keys as a dotted path; row keys are already
// bracketed ("operations[contract tasks.get].schemas.input").
func formatPath(p []string) string {
	var b strings.Builder
	for _, k := range p {
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
