package validate

import (
	"math/big"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// formats are the format assertions the translator may emit, each with the
// meaning CUE gives the constraint it came from (see cue.go). Time formats
// check strings, range formats numbers; other kinds pass, as JSON Schema
// formats do. CUE's time.Time is time.ParseInLocation(time.RFC3339Nano),
// which is not exactly RFC 3339 §5.6 (Go refuses a leap second, for one):
// asserting with the same parser makes the validator agree with CUE by
// construction.
var formats = []*jsonschema.Format{
	timeFormat("date-time", time.RFC3339Nano),
	timeFormat("date", time.DateOnly),
	rangeFormat("int64", int64Min, int64Max),
	rangeFormat("uint64", nil, uint64Max),
	rangeFormat("int128", int128Min, int128Max),
	rangeFormat("uint128", nil, uint128Max),
	rangeFormat("double", new(big.Rat).Neg(doubleMax), doubleMax),
	rangeFormat("float", new(big.Rat).Neg(floatMax), floatMax),
}

// vocabulary holds the keywords rewrite introduces (see cue.go).
var vocabulary = cueVocabulary()
