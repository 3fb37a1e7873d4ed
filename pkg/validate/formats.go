package validate

import (
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// formats are the format assertions the translator may emit, each with the
// meaning CUE gives the constraint it came from. Only strings are checked:
// JSON Schema formats ignore other kinds.
var formats = []*jsonschema.Format{
	// CUE's time.Time is time.Parse(time.RFC3339Nano, s), which is not
	// exactly RFC 3339 §5.6 (Go refuses a leap second, for one). Asserting
	// with the same parser makes the validator agree with CUE by
	// construction.
	{Name: "date-time", Validate: func(v any) error {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		_, err := time.Parse(time.RFC3339Nano, s)
		return err
	}},
}
