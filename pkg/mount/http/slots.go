package httpmount

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Response header values, made in blocks.
//
// Every response carries an X-Request-Id and every JSON success a
// Content-Type; each value is a one-element []string in the response's
// header map, and a fresh request id is a fresh string. Allocated one by
// one that is three allocations per request. A slots value hands them out
// from blocks of slotBlock values made together (three allocations per
// block), so a request allocates none of its own.
//
// Nothing mutable is shared: a request's slot is a one-element,
// full-capacity slice of a block (appending to it copies), each slot is
// handed to exactly one request, which may overwrite it, and a block is
// taken by one request at a time (blocks with slots left wait in a
// sync.Pool, so parallel requests on different Ps never contend; a block
// the pool drops at a GC only leaves its sequence numbers unused). The
// price: a response header kept after its request keeps its block (about
// 1 KiB) alive.

const slotBlock = 32

// slots hands out one-element []string header values.
type slots struct {
	// fill sets the values of a new block whose first slot has sequence
	// number first.
	fill func(first uint64, vals []string)
	seq  atomic.Uint64 // sequence numbers handed to blocks so far
	free sync.Pool     // *block with slots left
}

type block struct {
	first uint64 // sequence number of vals[0]
	vals  []string
	next  int // the slot to hand out next
}

// take returns the next slot: a []string of length and capacity 1 that no
// other request holds, and its sequence number (unique per slots value).
func (s *slots) take() ([]string, uint64) {
	b, _ := s.free.Get().(*block)
	if b == nil {
		b = &block{first: s.seq.Add(slotBlock) - slotBlock, vals: make([]string, slotBlock)}
		s.fill(b.first, b.vals)
	}
	i := b.next
	v, n := b.vals[i:i+1:i+1], b.first+uint64(i)
	if b.next++; b.next < slotBlock {
		s.free.Put(b)
	}
	return v, n
}

// constSlots hands out slots holding v.
func constSlots(v string) *slots {
	return &slots{fill: func(_ uint64, vals []string) {
		for i := range vals {
			vals[i] = v
		}
	}}
}

// idSlots hands out fresh request ids: prefix followed by the slot's
// sequence number in base 36, unique within the process. The block's ids
// share one string; its numbers are consecutive, so after the first each
// is the previous one plus one, counted on the digits (no division per id).
func idSlots(prefix string) *slots {
	return &slots{fill: func(first uint64, vals []string) {
		var sb strings.Builder
		sb.Grow(len(vals) * (len(prefix) + 8))
		var ends [slotBlock]int
		var buf [16]byte
		num := strconv.AppendUint(buf[:0], first, 36)
		for i := range vals {
			if i > 0 && !increment36(num) {
				num = strconv.AppendUint(buf[:0], first+uint64(i), 36) // one digit more
			}
			sb.WriteString(prefix)
			sb.Write(num)
			ends[i] = sb.Len()
		}
		all, start := sb.String(), 0
		for i := range vals {
			vals[i] = all[start:ends[i]]
			start = ends[i]
		}
	}}
}

// increment36 adds one in place to the base-36 number num (lower-case
// digits, as strconv writes them). It reports false when the sum needs one
// more digit (num was all z), leaving num unusable.
func increment36(num []byte) bool {
	for i := len(num) - 1; i >= 0; i-- {
		switch c := num[i]; c {
		case 'z':
			num[i] = '0'
		case '9':
			num[i] = 'a'
			return true
		default:
			num[i] = c + 1
			return true
		}
	}
	return false
}
