package review

import (
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Whether every string one set of patterns admits is admitted by another
// is decidable: patterns are regular languages. patternsSubset answers it
// by exploring the product of the patterns' automata (Go's own compiled
// programs, RE2 syntax — the patterns a contract carries mean the same in
// RE2 and ECMA-262) for a string all of sub accept and sup refuses. It
// gives up — known false — on constructs it does not model (word
// boundaries, multi-line anchors, case folding) or when the search grows
// past a fixed budget, and the caller falls back to comparing the pattern
// texts.

// maxRegexStates bounds the product states one inclusion check visits.
const maxRegexStates = 4096

// patternProg is one compiled JSON Schema pattern: an unanchored search,
// so it is compiled as (?s:.*)(?:P)(?s:.*) and matched against the whole
// string.
type patternProg struct {
	prog *syntax.Prog
}

func compilePattern(p string) (*patternProg, bool) {
	re, err := syntax.Parse(`(?s:.*)(?:`+p+`)(?s:.*)`, syntax.Perl)
	if err != nil {
		return nil, false
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, false
	}
	for _, in := range prog.Inst {
		switch in.Op {
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^(syntax.EmptyBeginText|syntax.EmptyEndText) != 0 {
				return nil, false // ^/$ in multi-line mode, \b, \B
			}
		case syntax.InstRune, syntax.InstRune1:
			if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
				return nil, false
			}
		}
	}
	return &patternProg{prog: prog}, true
}

// closure returns the instructions reachable from pcs without consuming a
// rune, at the start (begin) and/or end of the text, sorted.
func (p *patternProg) closure(pcs []uint32, begin, end bool) []uint32 {
	seen := map[uint32]bool{}
	var out []uint32
	var visit func(pc uint32)
	visit = func(pc uint32) {
		if seen[pc] {
			return
		}
		seen[pc] = true
		in := &p.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			visit(in.Out)
			visit(in.Arg)
		case syntax.InstCapture, syntax.InstNop:
			visit(in.Out)
		case syntax.InstEmptyWidth:
			op := syntax.EmptyOp(in.Arg)
			if (op&syntax.EmptyBeginText == 0 || begin) && (op&syntax.EmptyEndText == 0 || end) {
				visit(in.Out)
			}
		case syntax.InstFail:
		default: // InstMatch and rune instructions
			out = append(out, pc)
		}
	}
	for _, pc := range pcs {
		visit(pc)
	}
	slices.Sort(out)
	return out
}

func (p *patternProg) accepts(pcs []uint32, begin bool) bool {
	for _, pc := range p.closure(pcs, begin, true) {
		if p.prog.Inst[pc].Op == syntax.InstMatch {
			return true
		}
	}
	return false
}

func (p *patternProg) step(pcs []uint32, begin bool, r rune) []uint32 {
	var next []uint32
	for _, pc := range p.closure(pcs, begin, false) {
		in := &p.prog.Inst[pc]
		if in.Op != syntax.InstMatch && in.MatchRune(r) {
			next = append(next, in.Out)
		}
	}
	slices.Sort(next)
	return slices.Compact(next)
}

// boundaries adds the first rune of every interval on which p's rune
// instructions agree.
func (p *patternProg) boundaries(into map[rune]bool) {
	into[0] = true
	for _, in := range p.prog.Inst {
		switch in.Op {
		case syntax.InstRune:
			for i := 0; i+1 < len(in.Rune); i += 2 {
				into[in.Rune[i]] = true
				into[in.Rune[i+1]+1] = true
			}
			if len(in.Rune) == 1 {
				into[in.Rune[0]] = true
				into[in.Rune[0]+1] = true
			}
		case syntax.InstRune1:
			into[in.Rune[0]] = true
			into[in.Rune[0]+1] = true
		case syntax.InstRuneAnyNotNL:
			into['\n'] = true
			into['\n'+1] = true
		}
	}
}

// patternsSubset reports whether every string matching all of sub matches
// all of sup; known is false when that cannot be decided here.
func patternsSubset(sub, sup []string) (subset, known bool) {
	var left []*patternProg
	for _, s := range sub {
		p, ok := compilePattern(s)
		if !ok {
			return false, false
		}
		left = append(left, p)
	}
	for _, s := range sup {
		right, ok := compilePattern(s)
		if !ok {
			return false, false
		}
		inside, ok := regexSubset(left, right)
		if !ok {
			return false, false
		}
		if !inside {
			return false, true
		}
	}
	return true, true
}

// regexSubset searches the product of left (all must match) and right for
// a string every left program accepts and right refuses.
func regexSubset(left []*patternProg, right *patternProg) (subset, known bool) {
	progs := append(slices.Clone(left), right)
	bounds := map[rune]bool{}
	for _, p := range progs {
		p.boundaries(bounds)
	}
	// One representative rune per interval between boundaries (strings
	// hold no surrogate code points).
	var starts []rune
	for r := range bounds {
		if r >= 0 && r <= unicode.MaxRune {
			starts = append(starts, r)
		}
	}
	slices.Sort(starts)
	var reps []rune
	for i, r := range starts {
		end := rune(unicode.MaxRune + 1)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		if r >= 0xD800 && r <= 0xDFFF {
			r = 0xE000
		}
		if r < end {
			reps = append(reps, r)
		}
	}
	type state struct {
		sets  [][]uint32
		begin bool
	}
	key := func(s state) string {
		var b strings.Builder
		b.WriteString(strconv.FormatBool(s.begin))
		for _, set := range s.sets {
			b.WriteByte('|')
			for _, pc := range set {
				b.WriteString(strconv.FormatUint(uint64(pc), 36))
				b.WriteByte(',')
			}
		}
		return b.String()
	}
	start := state{begin: true}
	for _, p := range progs {
		start.sets = append(start.sets, []uint32{uint32(p.prog.Start)})
	}
	seen := map[string]bool{key(start): true}
	queue := []state{start}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		all := true
		for i, p := range left {
			if !p.accepts(s.sets[i], s.begin) {
				all = false
				break
			}
		}
		if all && !right.accepts(s.sets[len(left)], s.begin) {
			return false, true // a witness string
		}
		for _, r := range reps {
			next := state{}
			dead := false
			for i, p := range progs {
				set := p.step(s.sets[i], s.begin, r)
				if i < len(left) && len(set) == 0 {
					dead = true // some left program can no longer match
					break
				}
				next.sets = append(next.sets, set)
			}
			if dead {
				continue
			}
			k := key(next)
			if seen[k] {
				continue
			}
			if len(seen) >= maxRegexStates {
				return false, false
			}
			seen[k] = true
			queue = append(queue, next)
		}
	}
	return true, true
}
