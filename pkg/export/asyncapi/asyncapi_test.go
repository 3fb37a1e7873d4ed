package asyncapi_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"stitchkit.dev/stitchkit/pkg/project"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"stitchkit.dev/stitchkit/pkg/export/asyncapi"
	"stitchkit.dev/stitchkit/pkg/graph"
)

const schemaURL = "http://asyncapi.com/definitions/3.0.0/asyncapi.json"

// officialSchema compiles the AsyncAPI 3.0.0 JSON Schema from testdata,
// refusing any network access.
func officialSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/asyncapi-3.0.0.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(offline{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type offline struct{}

func (offline) Load(url string) (any, error) {
	return nil, &os.PathError{Op: "load", Path: url, Err: os.ErrPermission}
}

func validate(t *testing.T, s *jsonschema.Schema, doc []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("document does not validate against the AsyncAPI 3.0.0 schema: %v\n%s", err, doc)
	}
}

func add(t *testing.T, g *graph.Graph, s any) graph.Digest {
	t.Helper()
	d, err := g.AddSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var task = map[string]any{
	"type": "object", "additionalProperties": false, "required": []any{"id", "done"},
	"properties": map[string]any{"id": map[string]any{"type": "string"}, "done": map[string]any{"type": "boolean"}},
}

// tuple is the schema of an event's arguments, written as the compiler
// writes it (no arguments: an empty array; "prefixItems": [] is not a
// valid schema, and a projection compiles every schema).
func tuple(items ...any) map[string]any {
	if len(items) == 0 {
		return map[string]any{"type": "array", "items": false}
	}
	return map[string]any{"type": "array", "prefixItems": items, "items": false, "minItems": len(items)}
}

// realtimeGraph: board (one event each way, an ack each way), chat (the
// same event name in both directions) and idle (no events). reverse builds
// contracts and events in the opposite order.
func realtimeGraph(t *testing.T, reverse bool) *graph.Graph {
	t.Helper()
	g := &graph.Graph{Name: "tasks", Version: "1.0.0", Info: graph.Info{Description: "Tasks realtime."}}
	taskArgs := tuple(map[string]any{"$ref": "#/$defs/Task"})
	taskArgs["$defs"] = map[string]any{"Task": task}
	board := graph.RealtimeContract{Name: "board",
		ServerToClient: []graph.Event{
			{Name: "taskChanged", Desc: "A task changed", Args: add(t, g, taskArgs)},
			{Name: "confirm", Args: add(t, g, tuple(map[string]any{"type": "string"})), Ack: add(t, g, map[string]any{"type": "boolean"})},
		},
		ClientToServer: []graph.Event{
			{Name: "watch", Desc: "Watch a board", Args: add(t, g, tuple(map[string]any{"type": "object", "properties": map[string]any{"board": map[string]any{"type": "string"}}, "required": []any{"board"}})),
				Ack: add(t, g, map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []any{"ok"}})},
		},
	}
	chat := graph.RealtimeContract{Name: "chat",
		ServerToClient: []graph.Event{{Name: "ping", Args: add(t, g, tuple())}},
		ClientToServer: []graph.Event{{Name: "ping", Args: add(t, g, tuple())}},
	}
	idle := graph.RealtimeContract{Name: "idle"}
	g.Realtime = []graph.RealtimeContract{board, chat, idle}
	if reverse {
		slices.Reverse(g.Realtime)
		slices.Reverse(g.Realtime[2].ServerToClient)
	}
	return g
}

func generate(t *testing.T, g *graph.Graph, opts *asyncapi.Options) []byte {
	t.Helper()
	b, err := asyncapi.Generate(projecttest.New(t, g, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidatesAgainstOfficialSchema(t *testing.T) {
	s := officialSchema(t)
	doc := generate(t, realtimeGraph(t, false), &asyncapi.Options{Servers: []asyncapi.Server{{Name: "local", Host: "127.0.0.1:8080", Protocol: "ws", Description: "stitch serve"}}})
	if os.Getenv("DUMP") != "" {
		os.Stdout.Write(doc)
	}
	validate(t, s, doc)
	validate(t, s, generate(t, &graph.Graph{Name: "empty"}, nil))
}

// TestOfficialSchemaCanFail makes sure the validation above is real.
func TestOfficialSchemaCanFail(t *testing.T) {
	s := officialSchema(t)
	doc := generate(t, realtimeGraph(t, false), nil)
	for _, bad := range [][2]string{
		{`"action": "send"`, `"action": "publish"`},
		{`"asyncapi": "3.0.0"`, `"asyncapi": "2.6.0"`},
		{`"address": "/realtime/idle"`, `"address": 7`},
	} {
		broken := bytes.Replace(doc, []byte(bad[0]), []byte(bad[1]), 1)
		if bytes.Equal(broken, doc) {
			t.Fatalf("fixture %q not found", bad[0])
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(broken))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(v); err == nil {
			t.Errorf("schema accepted a document with %s", bad[1])
		}
	}
}

func TestByteStable(t *testing.T) {
	a := generate(t, realtimeGraph(t, false), nil)
	for range 5 {
		if b := generate(t, realtimeGraph(t, false), nil); !bytes.Equal(a, b) {
			t.Fatal("two runs differ")
		}
	}
	if b := generate(t, realtimeGraph(t, true), nil); !bytes.Equal(a, b) {
		t.Fatal("graph built in another order gives other bytes")
	}
	if !bytes.HasSuffix(a, []byte("}\n")) || !bytes.HasPrefix(a, []byte("{\n  \"")) {
		t.Error("not two-space indented JSON ending in a newline")
	}
}

func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := graph.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func canonSchema(t *testing.T, v any) string {
	t.Helper()
	b, err := graph.CanonicalSchema(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDocumentShape(t *testing.T) {
	var m map[string]any
	if err := json.Unmarshal(generate(t, realtimeGraph(t, false), &asyncapi.Options{Prefix: "/ws/"}), &m); err != nil {
		t.Fatal(err)
	}
	channels := m["channels"].(map[string]any)
	if got := canon(t, channels["idle"]); got != `{"address":"/ws/idle","messages":{},"title":"idle"}` {
		t.Errorf("empty contract channel = %s", got)
	}
	boardMsgs := channels["board"].(map[string]any)["messages"].(map[string]any)
	var keys []string
	for k := range boardMsgs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if got := strings.Join(keys, " "); got != "clientToServer.watch clientToServer.watch.ack serverToClient.confirm serverToClient.confirm.ack serverToClient.taskChanged" {
		t.Errorf("board messages = %s", got)
	}
	if got := canon(t, boardMsgs["serverToClient.taskChanged"].(map[string]any)["payload"]); got != `{"schema":{"items":false,"minItems":1,"prefixItems":[{"$ref":"#/components/schemas/Task/schema"}],"type":"array"},"schemaFormat":"application/schema+json;version=2020-12"}` {
		t.Errorf("taskChanged payload = %s", got)
	}
	if got := canon(t, m["components"]); got != `{"schemas":{"Task":{"schema":`+canonSchema(t, task)+`,"schemaFormat":"application/schema+json;version=2020-12"}}}` {
		t.Errorf("components = %s", got)
	}

	ops := m["operations"].(map[string]any)
	if got := canon(t, ops["board.clientToServer.watch"]); got != `{"action":"receive","channel":{"$ref":"#/channels/board"},"messages":[{"$ref":"#/channels/board/messages/clientToServer.watch"}],"reply":{"channel":{"$ref":"#/channels/board"},"messages":[{"$ref":"#/channels/board/messages/clientToServer.watch.ack"}]},"summary":"Watch a board"}` {
		t.Errorf("watch = %s", got)
	}
	if got := canon(t, ops["board.serverToClient.taskChanged"]); got != `{"action":"send","channel":{"$ref":"#/channels/board"},"messages":[{"$ref":"#/channels/board/messages/serverToClient.taskChanged"}],"summary":"A task changed"}` {
		t.Errorf("taskChanged = %s", got)
	}
	if ops["board.serverToClient.confirm"].(map[string]any)["reply"] == nil {
		t.Error("serverToClient ack has no reply")
	}
	if ops["chat.serverToClient.ping"] == nil || ops["chat.clientToServer.ping"] == nil || len(ops) != 5 {
		t.Errorf("operations = %v", ops)
	}
	// Every $ref in the document resolves.
	raw := generate(t, realtimeGraph(t, false), nil)
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	checkRefs(t, doc, doc)
}

// checkRefs resolves every "$ref" JSON pointer against root.
func checkRefs(t *testing.T, root, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		if r, ok := x["$ref"].(string); ok {
			cur := root
			for _, tok := range strings.Split(strings.TrimPrefix(r, "#/"), "/") {
				m, ok := cur.(map[string]any)
				if !ok {
					t.Fatalf("unresolvable $ref %s", r)
				}
				if cur, ok = m[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]; !ok {
					t.Fatalf("unresolvable $ref %s", r)
				}
			}
		}
		for _, e := range x {
			checkRefs(t, root, e)
		}
	case []any:
		for _, e := range x {
			checkRefs(t, root, e)
		}
	}
}

// TestTopologyErrorsSurface: a broken topology does not project, so no
// document is written from it.
func TestTopologyErrorsSurface(t *testing.T) {
	g := realtimeGraph(t, false)
	g.Realtime[0].ServerToClient[0].Args = "0000000000000000"
	if _, err := project.New(g, nil); err == nil || !strings.Contains(err.Error(), "Realtime args schema digest missing") {
		t.Errorf("missing args schema: %v", err)
	}
}
