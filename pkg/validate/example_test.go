package validate_test

import (
	"errors"
	"fmt"

	"stitchkit.dev/stitchkit/pkg/validate"
)

func ExampleCompile() {
	v, err := validate.Compile([]byte(`{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":100,"default":20}},"additionalProperties":false}`))
	if err != nil {
		panic(err)
	}
	value, err := validate.DecodeJSON([]byte(`{"limit":0,"x":true}`), nil)
	if err != nil {
		panic(err)
	}
	var verr *validate.Error
	if errors.As(v.Validate(value), &verr) {
		for _, is := range verr.Issues {
			fmt.Printf("%s %s: %s\n", is.Path, is.Keyword, is.Message)
		}
	}
	filled, _ := v.ApplyDefaults(map[string]any{})
	fmt.Println(filled)
	// Output:
	//  additionalProperties: additional properties 'x' not allowed
	// /limit minimum: minimum: got 0, want 1
	// map[limit:20]
}

func ExampleValidator_ValidateJSON() {
	v, err := validate.Compile([]byte(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`))
	if err != nil {
		panic(err)
	}
	// An accepted value is judged on its bytes, without building it.
	fmt.Println(v.ValidateJSON([]byte(`{"id":"t_1"}`), nil))
	fmt.Println(v.ValidateJSON([]byte(`{}`), nil))
	fmt.Println(v.ValidateJSON([]byte(`{"id":"a","id":"b"}`), nil))
	// Output:
	// <nil>
	// /: missing property 'id'
	// invalid JSON at byte 10: key "id" appears twice in one object
}
