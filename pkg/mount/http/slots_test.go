package httpmount

import (
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestIncrement36 checks the in-place base-36 count against strconv, across
// every digit-count boundary up to five digits and near the top of uint64.
func TestIncrement36(t *testing.T) {
	check := func(from uint64, n int) {
		t.Helper()
		num := strconv.AppendUint(nil, from, 36)
		for i := 1; i <= n; i++ {
			want := strconv.FormatUint(from+uint64(i), 36)
			if !increment36(num) {
				if len(want) == len(num) {
					t.Fatalf("%d: reported a carry out, want %s", from+uint64(i), want)
				}
				num = []byte(want)
				continue
			}
			if string(num) != want {
				t.Fatalf("%d: got %s, want %s", from+uint64(i), num, want)
			}
		}
	}
	check(0, 36*36*36+100)
	p := uint64(36 * 36 * 36 * 36)
	check(p-50, 100)
	check(p*36-50, 100)
	check(^uint64(0)-100, 100)
}

// TestIDSlots: concurrent takers get distinct ids of the documented form
// (prefix + base-36 sequence), each in a slot of its own that it may
// overwrite (run with -race: no slot is touched by two goroutines).
func TestIDSlots(t *testing.T) {
	const prefix, workers, each = "p-", 8, 3 * slotBlock
	s := idSlots(prefix)
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var got []string
			for range each {
				v, n := s.take()
				if len(v) != 1 || cap(v) != 1 {
					t.Errorf("slot len %d cap %d", len(v), cap(v))
					return
				}
				if want := prefix + strconv.FormatUint(n, 36); v[0] != want {
					t.Errorf("slot %d holds %q, want %q", n, v[0], want)
				}
				got = append(got, v[0])
				v[0] = "overwritten" // the request's own slot
				if v = append(v, "x"); len(v) != 2 {
					t.Error("append")
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range got {
				if seen[id] {
					t.Errorf("id %s handed out twice", id)
				}
				seen[id] = true
			}
		})
	}
	wg.Wait()
	if len(seen) != workers*each {
		t.Errorf("%d distinct ids, want %d", len(seen), workers*each)
	}
}

// TestConstSlots: every slot holds the value, whatever other holders wrote
// into theirs.
func TestConstSlots(t *testing.T) {
	s := constSlots("application/json")
	for range 3 * slotBlock {
		v, _ := s.take()
		if len(v) != 1 || cap(v) != 1 || v[0] != "application/json" {
			t.Fatalf("slot %q (cap %d)", v, cap(v))
		}
		v[0] = "text/plain"
	}
}

// FuzzIsCleanPath: the scan agrees with its definition by path.Clean, and
// cleanCheckPath with EscapedPath.
func FuzzIsCleanPath(f *testing.F) {
	for _, s := range []string{"", "/", "//", "/a", "/a/", "/a//", "//a", "/a/./b", "/a/../b", "/.", "/..", "/a/.",
		"/a/..", "/.a", "/..a/", "/a/b.", "a", "a/", "/%2e%2e/", "/a/b/c/", "/a b/./", "/é/..", "/a?b/", "/a%/b", "*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		want := false
		if p != "" && p[0] == '/' {
			c := path.Clean(p)
			if strings.HasSuffix(p, "/") && c != "/" {
				c += "/"
			}
			want = c == p
		}
		if got := isCleanPath(p); got != want {
			t.Errorf("isCleanPath(%q) = %v, want %v", p, got, want)
		}
		// Judging the unescaped path (no RawPath) is judging the escaped
		// one.
		u := &url.URL{Path: p}
		if got, esc := isCleanPath(cleanCheckPath(u)), isCleanPath(u.EscapedPath()); got != esc {
			t.Errorf("path %q: %v, escaped %q: %v", p, got, u.EscapedPath(), esc)
		}
	})
}
