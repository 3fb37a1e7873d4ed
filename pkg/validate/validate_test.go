package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func mustCompile(t *testing.T, schema string) *Validator {
	t.Helper()
	v, err := Compile([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestValidateIssues(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":100},"at":{"type":"string","format":"date-time"}},"required":["limit"],"additionalProperties":false}`)
	for _, tc := range []struct {
		in      string
		ok      bool
		path    string
		keyword string
	}{
		{`{"limit": 20}`, true, "", ""},
		{`{"limit": 0}`, false, "/limit", "minimum"},
		{`{"limit": 101}`, false, "/limit", "maximum"},
		{`{"limit": 2.5}`, false, "/limit", "type"},
		{`{}`, false, "", "required"},
		{`{"limit": 1, "x": 1}`, false, "", "additionalProperties"},
		{`{"limit": 1, "at": "2024-01-02T03:04:05Z"}`, true, "", ""},
		{`{"limit": 1, "at": "2024-01-02T03:04:60Z"}`, false, "/at", "format"},
		{`{"limit": 1, "at": "2024-01-02"}`, false, "/at", "format"},
	} {
		val, err := DecodeJSON([]byte(tc.in), nil)
		if err != nil {
			t.Fatal(err)
		}
		err = v.Validate(val)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err=%v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if tc.ok {
			continue
		}
		var ve *Error
		if !errors.As(err, &ve) || len(ve.Issues) == 0 {
			t.Fatalf("%s: %T %v", tc.in, err, err)
		}
		if got := ve.Issues[0]; got.Path != tc.path || got.Keyword != tc.keyword || got.Message == "" {
			t.Errorf("%s: issue %+v, want path %q keyword %q", tc.in, got, tc.path, tc.keyword)
		}
	}
}

func TestDecodeJSON(t *testing.T) {
	for _, tc := range []struct {
		in      string
		ok      bool
		tooDeep bool
	}{
		{`{"a":1}`, true, false},
		{`  [1, 2]  `, true, false},
		{`{"a":1,"a":2}`, false, false},
		{`{"a":{"b":1},"b":{"b":2}}`, true, false},
		{`{"\u0061":1,"a":2}`, false, false},
		{`{"a":"x,\"a\":1"}`, true, false},
		{strings.Repeat("[", 64) + strings.Repeat("]", 64), true, false},
		{strings.Repeat("[", 65) + strings.Repeat("]", 65), false, true},
		{`{"a":1} x`, false, false},
		{"\"\xff\"", false, false},
		{``, false, false},
		{`{"a":`, false, false},
	} {
		_, err := DecodeJSON([]byte(tc.in), nil)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err=%v, want ok=%v", tc.in, err, tc.ok)
		}
		var de *DecodeError
		if err != nil && (!errors.As(err, &de) || de.TooDeep != tc.tooDeep) {
			t.Errorf("%q: %#v, want DecodeError TooDeep=%v", tc.in, err, tc.tooDeep)
		}
	}
}

func TestCacheConcurrent(t *testing.T) {
	var c Cache
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.Get("d1", []byte(`{"type":"string"}`))
			if err != nil || v.Validate("x") != nil || v.Validate(true) == nil {
				t.Error("cache validator wrong", err)
			}
		}()
	}
	wg.Wait()
}

// FuzzDecodeJSON compares DecodeJSON with encoding/json: on valid JSON
// both build the same value (json.Number numbers), unless DecodeJSON
// refuses for one of its own rules (nesting, a repeated key, invalid
// UTF-8, a lone UTF-16 surrogate escape); what encoding/json refuses,
// DecodeJSON refuses too.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c"}]}`, `[[[[]]]]`, `{"a":1,"a":2}`, `"\u00e9"`, `"\ud83d\ude00 \ud800x"`,
		`-0.5e+10`, `{"k":[true,false,null,"\n\t\/"]}`, ` 1 `, `01`, `[1,]`, `{"a" 1}`, "\"\x01\"", `1e400`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeJSON(b, &DecodeOptions{MaxDepth: 8})
		valid := json.Valid(b)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("%q: error %T %v", b, err, err)
			}
			if de.Offset < 0 || de.Offset > int64(len(b)) {
				t.Fatalf("%q: offset %d out of range", b, de.Offset)
			}
			ownRule := de.TooDeep || strings.Contains(de.Reason, "appears twice") || de.Reason == "invalid UTF-8" && !utf8.Valid(b) ||
				strings.HasPrefix(de.Reason, "number exponent beyond") || strings.Contains(de.Reason, "unmatched surrogate")
			if valid && !ownRule {
				t.Fatalf("%q: encoding/json accepts, DecodeJSON refuses: %v", b, err)
			}
			return
		}
		if !valid {
			t.Fatalf("%q: DecodeJSON accepts what encoding/json refuses", b)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: DecodeJSON %#v, encoding/json %#v", b, got, want)
		}
	})
}

// TestUnionIssues: a union the instance names an alternative of (by a
// discriminator's value) reports what is wrong inside that alternative; one
// it names none of says how many alternatives it missed.
func TestUnionIssues(t *testing.T) {
	v := mustCompile(t, `{"anyOf":[
		{"type":"object","properties":{"kind":{"const":"email"},"to":{"type":"string","minLength":3}},"required":["kind","to"],"additionalProperties":false},
		{"type":"object","properties":{"kind":{"const":"sms"},"phone":{"type":"string"}},"required":["kind","phone"],"additionalProperties":false}]}`)
	for _, tc := range []struct {
		in, path, keyword, message string
	}{
		{`{"kind":"email","to":"x"}`, "/to", "minLength", ""},
		{`{"kind":"sms"}`, "", "required", ""},
		{`{"kind":"fax"}`, "", "anyOf", "matches none of the 2 alternatives"},
		{`7`, "", "anyOf", "matches none of the 2 alternatives"},
	} {
		val, err := DecodeJSON([]byte(tc.in), nil)
		if err != nil {
			t.Fatal(err)
		}
		var ve *Error
		if err := v.Validate(val); !errors.As(err, &ve) || len(ve.Issues) == 0 {
			t.Fatalf("%s: %v", tc.in, err)
		}
		got := ve.Issues[0]
		if got.Path != tc.path || got.Keyword != tc.keyword || tc.message != "" && got.Message != tc.message {
			t.Errorf("%s: issue %+v, want path %q keyword %q message %q", tc.in, got, tc.path, tc.keyword, tc.message)
		}
	}
}

// TestDecodeSurrogates: a string escape of half a UTF-16 surrogate pair is
// refused, by the decoder and by the byte-level validation alike, as CUE
// refuses it; a whole pair is the one character it encodes.
func TestDecodeSurrogates(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{"a":{"type":"string"}}}`)
	for _, in := range []string{`{"a":"\ud83d"}`, `{"a":"\udc00"}`, `{"a":"\ud83dx"}`, `{"a":"\ud83d\u0041"}`, `{"a":"\ude00\ud83d"}`, `{"b":"\ud83d"}`, `{"\udc00":1}`} {
		if _, err := DecodeJSON([]byte(in), nil); err == nil || !strings.Contains(err.Error(), "surrogate") {
			t.Errorf("DecodeJSON(%s) = %v, want an unmatched surrogate error", in, err)
		}
		if err := v.ValidateJSON([]byte(in), nil); err == nil {
			t.Errorf("ValidateJSON(%s) accepted", in)
		}
	}
	got, err := DecodeJSON([]byte(`{"a":"\ud83d\ude00"}`), nil)
	if err != nil || got.(map[string]any)["a"] != "😀" {
		t.Errorf("a surrogate pair: %v, %v", got, err)
	}
	if err := v.ValidateJSON([]byte(`{"a":"\ud83d\ude00","b":"\uDBFF\uDFFF"}`), nil); err != nil {
		t.Errorf("a surrogate pair refused: %v", err)
	}
}
