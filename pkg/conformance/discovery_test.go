package conformance

import (
	"strings"
	"testing"
)

// TestDiscoveryIgnoresPathExtensions: keys of the Paths Object matching
// ^x- are specification extensions, whatever their value (OpenAPI 3.1
// §4.8.8), not routes; a path whose value is not a Path Item Object is a
// broken document, named in the error.
func TestDiscoveryIgnoresPathExtensions(t *testing.T) {
	m := build(t, itemsGraph(t, "number", false), testOpts)
	doc := `{"openapi":"3.1.0","paths":{
	  "x-internal": "note",
	  "x-owners": ["payments"],
	  "x-meta": {"get": {}},
	  "/api/v1/items":{"get":{},"x-rate":10},
	  "/api/v1/items/{id}":{"get":{},"head":{}},
	  "/api/v1/items/choose":{"post":{}}}}`
	if err := AssertDiscovery(m, Observed{OpenAPI: doc}); err != nil {
		t.Errorf("extensions in paths: %v", err)
	}
	broken := `{"paths":{"/api/v1/items":"note"}}`
	err := AssertDiscovery(m, Observed{OpenAPI: broken})
	if err == nil || !strings.Contains(err.Error(), `paths["/api/v1/items"] is not a Path Item Object`) {
		t.Errorf("a path that is not an object: %v", err)
	}
}
