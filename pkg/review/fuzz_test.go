package review

import (
	"encoding/json"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"
)

// suppressionSeeds are realistic stitch-review.yaml files (and a few
// near misses the parser must refuse without panicking).
var suppressionSeeds = []string{
	"",
	"# no suppressions yet\n",
	"suppressions: []\n",
	"suppressions:\n  - fingerprint: 3f1c2b7a9d0e4f51\n    reason: \"clients migrated in #482\"\n    expires: 2027-01-31\n",
	"suppressions:\n  - fingerprint: 533edd6b1c6d3d4a\n    reason: agents migrated\n  - fingerprint: 052aa5ea494e\n    reason: prefix is enough\n    expires: 2099-01-01\n",
	"suppressions:\n  - {fingerprint: 0123456789abcdef, reason: r}\n  - {fingerprint: fedcba9876543210, reason: 'it''s fine', expires: '2026-12-31'}\n",
	"suppressions:\n  - fingerprint: \"  5cd25e59e3cca10e  \"\n    reason: |\n      multi-line\n      reason\n",
	"suppressions:\n  - fingerprint: 0123456789abcdef\n    reason: x\n    expire: 2026-01-01\n",
	"supressions: []\n",
	"suppressions:\n  - fingerprint: xyz\n    reason: r\n",
	"suppressions:\n  - fingerprint: 0123456789abcdef\n    reason: r\n    expires: 31/12/2026\n",
	"suppressions:\n  - {fingerprint: 0123456789abcdef, reason: r}\n  - {fingerprint: 0123456789abcdef, reason: r}\n",
	"suppressions: &a\n  - fingerprint: 0123456789abcdef\n    reason: *a\n",
	"suppressions:\n  - fingerprint: 0123456789abcdef\n    reason: r\n---\nsuppressions: 3\n",
	"suppressions: null\n",
	"[1, 2]\n",
}

// FuzzParseSuppressions: ParseSuppressions never panics, and a file it
// accepts re-encodes to a file that parses to the same suppressions.
func FuzzParseSuppressions(f *testing.F) {
	for _, s := range suppressionSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSuppressions("stitch-review.yaml", data)
		if err != nil {
			return
		}
		out, err := encodeSuppressions(s)
		if err != nil {
			t.Fatalf("accepted suppressions do not encode: %v", err)
		}
		back, err := ParseSuppressions("stitch-review.yaml", out)
		if err != nil {
			t.Fatalf("re-encoded suppressions are refused: %v\ninput:\n%q\nencoded:\n%s", err, data, out)
		}
		same := func(a, b Suppression) bool {
			return a.Fingerprint == b.Fingerprint && a.Reason == b.Reason && a.Expires == b.Expires && a.expires.Equal(b.expires)
		}
		if !slices.EqualFunc(s.Suppressions, back.Suppressions, same) {
			t.Fatalf("suppressions changed in a round trip:\ninput:\n%q\nfirst:  %+v\nencoded:\n%s\nsecond: %+v", data, s.Suppressions, out, back.Suppressions)
		}
	})
}

// encodeSuppressions writes s as a stitch-review.yaml file with every
// value double-quoted. yaml.Marshal would pick block scalars, and it writes
// a string that starts with a newline as an invalid "|4-" block
// (go-yaml/yaml#861: "\n0" does not read back), which tests the encoder,
// not ParseSuppressions.
func encodeSuppressions(s *Suppressions) ([]byte, error) {
	str := func(v string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Style: yaml.DoubleQuotedStyle}
	}
	key := func(k string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k} }
	list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, sp := range s.Suppressions {
		item := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		item.Content = append(item.Content, key("fingerprint"), str(sp.Fingerprint), key("reason"), str(sp.Reason))
		if sp.Expires != "" {
			item.Content = append(item.Content, key("expires"), str(sp.Expires))
		}
		list.Content = append(list.Content, item)
	}
	if len(list.Content) == 0 {
		list.Style = yaml.FlowStyle
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{key("suppressions"), list}}
	return yaml.Marshal(doc)
}

// schemaSeeds are small canonical JSON Schema documents like the ones the
// compiler emits, including $refs, unions, bounds and the odd shapes the
// diff must survive (boolean schemas, cyclic and dangling refs).
var schemaSeeds = []string{
	`{}`,
	`true`,
	`false`,
	`{"type":"string"}`,
	`{"type":"string","minLength":1,"maxLength":200,"pattern":"^[a-z]+$"}`,
	`{"type":"integer","minimum":1,"maximum":100}`,
	`{"type":"integer","exclusiveMinimum":0}`,
	`{"type":"number","multipleOf":0.5}`,
	`{"type":["string","null"]}`,
	`{"enum":["todo","doing","done"]}`,
	`{"const":"email"}`,
	`{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":10,"uniqueItems":true}`,
	`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`,
	`{"type":"object","properties":{"title":{"type":"string","maxLength":200},"due":{"type":"string","format":"date-time"}},"required":["title"]}`,
	`{"type":"object","additionalProperties":{"type":"integer"}}`,
	`{"$ref":"#/$defs/Task","$defs":{"Task":{"type":"object","properties":{"id":{"type":"string"},"state":{"enum":["open","closed"]}},"required":["id","state"]}}}`,
	`{"type":"object","properties":{"t":{"$ref":"#/$defs/T"}},"required":["t"],"$defs":{"T":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}}}`,
	`{"$ref":"#/$defs/Node","$defs":{"Node":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node"}}}}}`,
	`{"$ref":"#/$defs/A","$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}}}`,
	`{"$ref":"#/$defs/missing"}`,
	`{"$ref":"#"}`,
	`{"oneOf":[{"type":"object","properties":{"kind":{"const":"email"},"to":{"type":"string"}},"required":["kind","to"]},{"type":"object","properties":{"kind":{"const":"sms"},"phone":{"type":"string"}},"required":["kind","phone"]}]}`,
	`{"anyOf":[{"type":"string"},{"type":"integer"}]}`,
	`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"required":["a"]}]}`,
	`{"not":{"type":"null"}}`,
	`{"type":"object","properties":{"a~1b":{"type":"string"},"c~0d":{"type":"integer"}}}`,
	`{"type":"string","description":"The task title","title":"Title","examples":["Buy milk"]}`,
	`{"prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`,
	`{"minimum":1e308,"maximum":-1e308}`,
}

// FuzzDiffSchemas: diffSchemas never panics on any pair of documents, in
// either direction, and a document diffed against itself yields nothing.
func FuzzDiffSchemas(f *testing.F) {
	for i, a := range schemaSeeds {
		b := schemaSeeds[(i+1)%len(schemaSeeds)]
		f.Add(false, []byte(a), []byte(b))
		f.Add(true, []byte(b), []byte(a))
	}
	f.Fuzz(func(t *testing.T, response bool, old, new []byte) {
		if len(old) > 4096 || len(new) > 4096 {
			return // small documents: schemas of one operation slot
		}
		dir := Request
		if response {
			dir = Response
		}
		_, _ = diffSchemas(dir, old, new, diffOptions{})
		_, _ = diffSchemas(dir, nil, new, diffOptions{})
		_, _ = diffSchemas(dir, old, nil, diffOptions{})
		for _, doc := range [][]byte{old, new} {
			if !json.Valid(doc) {
				continue
			}
			fs, err := diffSchemas(dir, doc, slices.Clone(doc), diffOptions{})
			if err != nil {
				continue
			}
			if len(fs) > 0 {
				t.Fatalf("%s schema %s diffed against itself: %+v", dir, doc, fs)
			}
		}
	})
}
