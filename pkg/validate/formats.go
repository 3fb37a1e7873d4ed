package validate

import (
	"time"
)

// format is one format assertion: Validate gets every instance value the
// schema applies to and returns nil for values it does not constrain.
type format struct {
	Name     string
	Validate func(v any) error
}

// formats are the format assertions the translator may emit, each with the
// meaning CUE gives the constraint it came from (see cue.go). Time formats
// check strings, range formats numbers; other kinds pass, as JSON Schema
// formats do. CUE's time.Time is time.ParseInLocation(time.RFC3339Nano),
// which is not exactly RFC 3339 §5.6 (Go refuses a leap second, for one):
// asserting with the same parser makes the validator agree with CUE by
// construction. A format not listed here (nor go-time:LAYOUT) makes
// Compile refuse the schema.
var formats = append([]*format{
	timeFormat("date-time", time.RFC3339Nano),
	timeFormat("date", time.DateOnly),
}, rangeFormats(
	"int64", "-9223372036854775808", "9223372036854775807",
	"uint64", "0", "18446744073709551615",
	"int128", "-170141183460469231731687303715884105728", "170141183460469231731687303715884105727",
	"uint128", "0", "340282366920938463463374607431768211455",
	"double", "-1.797693134862315708145274237317043567981e+308", "1.797693134862315708145274237317043567981e+308",
	"float", "-3.40282346638528859811704183484516925440e+38", "3.40282346638528859811704183484516925440e+38",
)...)

// rangeFormats returns, for each (name, lo, hi), the formats name (lo <=
// x <= hi), name-lower (lo <= x) and name-upper (x <= hi): CUE's int64 is
// both bounds, and a contract may write one of them alone (int & <=
// 9223372036854775807).
func rangeFormats(spec ...string) []*format {
	var out []*format
	for i := 0; i+2 < len(spec); i += 3 {
		name, lo, hi := spec[i], spec[i+1], spec[i+2]
		out = append(out, rangeFormat(name, lo, hi), rangeFormat(name+"-lower", lo, ""), rangeFormat(name+"-upper", "", hi))
	}
	return out
}
