package asyncapi_test

import (
	"context"
	"encoding/json"
	"testing"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/export/internal/exporttest"
)

// TestCompiledContract runs the exporter over a contract compiled from CUE.
func TestCompiledContract(t *testing.T) {
	g, err := check.CompileFiles(context.Background(), exporttest.Files)
	if err != nil {
		t.Fatal(err)
	}
	doc := generate(t, g, nil)
	validate(t, officialSchema(t), doc)
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	checkRefs(t, m, m)
	if got := canon(t, m["channels"].(map[string]any)["quiet"]); got != `{"address":"/realtime/quiet","messages":{},"title":"quiet"}` {
		t.Errorf("empty contract = %s", got)
	}
	ops := m["operations"].(map[string]any)
	if len(ops) != 2 || ops["board.clientToServer.watch"].(map[string]any)["reply"] == nil {
		t.Errorf("operations = %s", canon(t, ops))
	}
	if _, ok := m["components"].(map[string]any)["schemas"].(map[string]any)["Task"]; !ok {
		t.Errorf("Task not hoisted: %s", canon(t, m["components"]))
	}
}
