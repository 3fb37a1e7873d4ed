// Package engine is the JSON Schema 2020-12 validator behind
// stitchkit.dev/stitchkit/pkg/validate: a document is compiled once into a
// tree of nodes specialised per keyword (bounds parsed to exact decimals,
// patterns compiled once, property tables sorted with "required" folded
// in, references resolved to nodes, cycles included), and validating
// walks that tree over a decoded value without allocating when the value
// is accepted. A refused value is walked a second time to collect every
// issue with its instance path.
//
//	s, err := engine.Compile(doc, &engine.Options{Format: formats})
//	if issues := s.Validate(value); issues != nil { … }
//
// Numbers are exact: instances and bounds are read from their decimal
// text (json.Number), compared without rounding, and multipleOf is
// decided by modular arithmetic, so neither 2^53+1 nor 1e400 is
// misjudged and no short number can make the validator allocate
// without bound.
//
// What it implements, and nothing else (Compile refuses every other
// keyword, so no constraint is silently ignored): type, enum, const,
// format (through Options.Format), $ref to local targets (JSON pointers,
// "#", $anchor), $defs, allOf, anyOf, oneOf, not, if/then/else,
// properties, required, additionalProperties, patternProperties,
// propertyNames, minProperties, maxProperties, dependentRequired,
// dependentSchemas, prefixItems, items, minItems, maxItems, uniqueItems,
// contains, minContains, maxContains, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, multipleOf, minLength, maxLength
// (code points) and pattern (RE2, Go's regexp). Annotations ($schema,
// title, description, default, examples, deprecated, readOnly,
// writeOnly, $comment, content*) are accepted and do not constrain.
// Refused: $dynamicRef/$dynamicAnchor, unevaluatedProperties/Items,
// $id below the root, remote references, draft-07 spellings and unknown
// keywords.
package engine
