package engine

import (
	"regexp"
	"testing"
)

// patternCases are patterns of the shapes the translator emits (and some
// the fast matcher must decline).
var patternCases = []string{
	`^i_[a-z0-9]+$`, `^t_[a-z0-9]+$`, `^[a-z][a-z0-9-]{0,31}$`, `^\+[0-9]{6,15}$`,
	`^[^\x09\x0A\x0C\x0D @]+@[^\x09\x0A\x0C\x0D @]+$`, `^$`, `^abc$`, `^a?b$`, `^[é-ü]{2,3}x*$`,
	`^[a-z]*a$`, `^a*a$`, `^x{2}y{0,2}$`, `^(?i)ab$`, `^a+?$`, `ab`, `^ab`, `^a.b$`, `^(ab)+$`,
	`^[[:alpha:]]+[0-9]$`, `^\d{4}-\d{2}-\d{2}$`, `^😀+$`,
}

// TestPatternShapes: the fast matcher is used for the shapes it can match
// exactly, and declined for the others.
func TestPatternShapes(t *testing.T) {
	for src, fast := range map[string]bool{
		`^i_[a-z0-9]+$`: true, `^[a-z][a-z0-9-]{0,31}$`: true, `^\+[0-9]{6,15}$`: true,
		`^[^\x09\x0A\x0C\x0D @]+@[^\x09\x0A\x0C\x0D @]+$`: true, `^\d{4}-\d{2}-\d{2}$`: true,
		`^[a-z]*a$`: false, `^a*a$`: false, `^(?i)ab$`: false, `^a+?$`: false, `ab`: false,
		`^ab`: false, `^a.b$`: false, `^(ab)+$`: false, `^a?b$`: true, `^x*y?$`: false,
	} {
		p, err := newPattern(src)
		if err != nil {
			t.Fatal(err)
		}
		if (p.seq != nil) != fast {
			t.Errorf("%s: fast matcher %v, want %v", src, p.seq != nil, fast)
		}
	}
}

// FuzzPattern compares the fast matcher with Go's regexp on any string.
func FuzzPattern(f *testing.F) {
	for i := range patternCases {
		for _, s := range []string{"", "i_42", "t_", "a", "aa", "abc", "ab-c9", "+1234567", "x@y", "éü", "éüx", "\xff", "2024-01-02", "😀😀", "xxyy"} {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, s string) {
		src := patternCases[int(which)%len(patternCases)]
		p, err := newPattern(src)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(src)
		if got, want := p.MatchString(s), re.MatchString(s); got != want {
			t.Fatalf("%s on %q: fast %v, regexp %v", src, s, got, want)
		}
		if got, want := p.Match([]byte(s)), re.Match([]byte(s)); got != want {
			t.Fatalf("%s on %q (bytes): fast %v, regexp %v", src, s, got, want)
		}
	})
}
