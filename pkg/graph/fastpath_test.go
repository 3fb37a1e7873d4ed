package graph

import (
	"bytes"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"testing"
)

// FuzzFastPaths holds the canonical encoder's fast paths to the general
// code they skip: byte-order key sorting (SortUTF16) to the UTF-16
// comparison, a plain string to the escaping loop, a plain integer literal
// to ECMAScript number formatting.
func FuzzFastPaths(f *testing.F) {
	for _, s := range []string{"a", "", "\u00e9", "\ue000", "\U0001F600", "ｱ", "\"", "\\", "\x01", "0", "-0", "007", "123456789012345", "1234567890123456", "-5", "1e3", "\xff"} {
		f.Add(s, "b"+s, int64(len(s)))
	}
	f.Fuzz(func(t *testing.T, a, b string, seed int64) {
		keys := []string{a, b, a + b, b + a, "x" + a, a + "\ue000", a + "\U0001F600"}
		r := rand.New(rand.NewSource(seed))
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		got := slices.Clone(keys)
		SortUTF16(got)
		want := slices.Clone(keys)
		sort.SliceStable(want, func(i, j int) bool { return LessUTF16(want[i], want[j]) })
		for i := range got {
			if CompareUTF16(got[i], want[i]) != 0 {
				t.Fatalf("SortUTF16(%q) = %q, want %q", keys, got, want)
			}
		}
		for _, s := range []string{a, b} {
			var fast, slow bytes.Buffer
			writeString(&fast, s)
			slow.WriteByte('"')
			writeEscaped(&slow, s)
			slow.WriteByte('"')
			if fast.String() != slow.String() {
				t.Fatalf("writeString(%q) = %s, want %s", s, fast.String(), slow.String())
			}
			if plainInteger(s) {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					t.Fatalf("plainInteger(%q) but ParseFloat: %v", s, err)
				}
				if want := formatFloat(v); want != s {
					t.Fatalf("plainInteger(%q) but ECMAScript prints %s", s, want)
				}
			}
		}
	})
}
