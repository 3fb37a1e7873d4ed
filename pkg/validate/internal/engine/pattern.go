package engine

import (
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// pattern is a compiled "pattern" (or patternProperties key): Go's regexp,
// plus, for the shape identifiers and tokens usually have —
// ^literal[class]{m,n}…$, anchored at both ends — a matcher that walks
// the string once without the regexp machinery. The fast matcher is used
// only where greedy matching is exact (see seqOf); anything else is
// matched by regexp.
type pattern struct {
	re  *regexp.Regexp
	seq []seqItem // nil: no fast matcher
}

func newPattern(src string) (*pattern, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, err
	}
	return &pattern{re: re, seq: seqOf(src)}, nil
}

func (p *pattern) String() string { return p.re.String() }

// seqItem matches between min and max (-1: any number) runes of a class.
type seqItem struct {
	ranges   []rune // lo, hi pairs, as syntax.Regexp.Rune of a char class
	min, max int
}

func (it *seqItem) has(r rune) bool {
	for i := 0; i+1 < len(it.ranges); i += 2 {
		if r < it.ranges[i] {
			return false
		}
		if r <= it.ranges[i+1] {
			return true
		}
	}
	return false
}

// seqOf returns the fast matcher for src, or nil. It accepts a
// concatenation that begins with ^ and ends with $ (text anchors: Go reads
// them so without the m flag) of literals, classes and quantified
// single-rune classes, where every item whose count varies is followed by
// an item of at least one rune whose class is disjoint from it, or by $.
// Then a greedy walk is the only way to match: a rune the varying item's
// class holds cannot start the next item, so giving it back never helps.
func seqOf(src string) []seqItem {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return nil
	}
	subs := re.Sub
	if subs[0].Op != syntax.OpBeginText || subs[len(subs)-1].Op != syntax.OpEndText {
		return nil
	}
	var seq []seqItem
	for _, s := range subs[1 : len(subs)-1] {
		switch s.Op {
		case syntax.OpLiteral:
			if s.Flags&syntax.FoldCase != 0 {
				return nil
			}
			for _, r := range s.Rune {
				seq = append(seq, seqItem{ranges: []rune{r, r}, min: 1, max: 1})
			}
		case syntax.OpCharClass:
			seq = append(seq, seqItem{ranges: s.Rune, min: 1, max: 1})
		case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
			if s.Flags&syntax.NonGreedy != 0 {
				return nil
			}
			it, ok := single(s.Sub[0])
			if !ok {
				return nil
			}
			switch s.Op {
			case syntax.OpStar:
				it.min, it.max = 0, -1
			case syntax.OpPlus:
				it.min, it.max = 1, -1
			case syntax.OpQuest:
				it.min, it.max = 0, 1
			default:
				it.min, it.max = s.Min, s.Max
			}
			seq = append(seq, it)
		default:
			return nil
		}
	}
	for i, it := range seq {
		if it.min == it.max || i == len(seq)-1 {
			continue
		}
		next := seq[i+1]
		if next.min < 1 || overlaps(it.ranges, next.ranges) {
			return nil
		}
	}
	return seq
}

func single(s *syntax.Regexp) (seqItem, bool) {
	switch s.Op {
	case syntax.OpLiteral:
		if len(s.Rune) != 1 || s.Flags&syntax.FoldCase != 0 {
			return seqItem{}, false
		}
		return seqItem{ranges: []rune{s.Rune[0], s.Rune[0]}}, true
	case syntax.OpCharClass:
		return seqItem{ranges: s.Rune}, true
	}
	return seqItem{}, false
}

func overlaps(a, b []rune) bool {
	for i := 0; i+1 < len(a); i += 2 {
		for j := 0; j+1 < len(b); j += 2 {
			if a[i] <= b[j+1] && b[j] <= a[i+1] {
				return true
			}
		}
	}
	return false
}

// MatchString reports whether s matches.
func (p *pattern) MatchString(s string) bool {
	if p.seq == nil {
		return p.re.MatchString(s)
	}
	i := 0
	for k := range p.seq {
		it := &p.seq[k]
		n := 0
		for (it.max < 0 || n < it.max) && i < len(s) {
			r, size := rune(s[i]), 1
			if r >= utf8.RuneSelf {
				r, size = utf8.DecodeRuneInString(s[i:])
			}
			if !it.has(r) {
				break
			}
			i += size
			n++
		}
		if n < it.min {
			return false
		}
	}
	return i == len(s)
}

// Match reports whether b matches.
func (p *pattern) Match(b []byte) bool {
	if p.seq == nil {
		return p.re.Match(b)
	}
	i := 0
	for k := range p.seq {
		it := &p.seq[k]
		n := 0
		for (it.max < 0 || n < it.max) && i < len(b) {
			r, size := rune(b[i]), 1
			if r >= utf8.RuneSelf {
				r, size = utf8.DecodeRune(b[i:])
			}
			if !it.has(r) {
				break
			}
			i += size
			n++
		}
		if n < it.min {
			return false
		}
	}
	return i == len(b)
}
