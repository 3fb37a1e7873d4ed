package review

import (
	"fmt"
	"regexp"
	"testing"
	"time"
)

// TestDateLanguage holds the "date" pattern to what it stands for,
// time.Parse(time.DateOnly) (pkg/validate's and CUE's meaning), on every
// month and day number 00–39 of years chosen around every leap rule
// (divisible by 4, by 100, by 400, and neither), plus malformed strings.
func TestDateLanguage(t *testing.T) {
	re := regexp.MustCompile(formatLanguages["date"])
	years := []int{0, 1, 2, 3, 4, 96, 100, 200, 300, 400, 1600, 1700, 1800, 1900, 1999, 2000, 2001, 2004, 2023, 2024, 2100, 2400, 9996, 9999}
	check := func(s string) {
		_, err := time.Parse(time.DateOnly, s)
		if got, want := re.MatchString(s), err == nil; got != want {
			t.Errorf("%q: pattern says %v, time.Parse says %v (%v)", s, got, want, err)
		}
	}
	for _, y := range years {
		for m := 0; m <= 13; m++ {
			for d := 0; d <= 39; d++ {
				check(fmt.Sprintf("%04d-%02d-%02d", y, m, d))
			}
		}
	}
	for _, s := range []string{"", "2024-1-01", "2024-01-1", "24-01-01", "20240-01-01", "2024-01-01 ", " 2024-01-01", "2024/01/01", "+024-01-01", "２０２４-01-01", "2024-01-01T00:00:00Z"} {
		check(s)
	}
}
