package validate

import (
	"time"

	"stitchkit.dev/stitchkit/pkg/validate/internal/engine"
)

// format is one format assertion: Validate gets every instance value the
// schema applies to and returns nil for values it does not constrain.
type format struct {
	Name     string
	Validate func(v any) error
}

// formats are the format assertions the translator may emit, each with the
// meaning CUE gives the constraint it came from. Only strings are checked:
// JSON Schema formats ignore other kinds. A format not listed here makes
// Compile refuse the schema.
var formats = []*format{
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

// formatFor is the engine's format lookup.
func formatFor(name string) (engine.Format, bool) {
	for _, f := range formats {
		if f.Name == name {
			return f.Validate, true
		}
	}
	return nil, false
}
