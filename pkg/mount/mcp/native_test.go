package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
)

// thumbnail is a native tool answering an image block, a text block and
// its own _meta, with a declared output schema for structuredContent.
func thumbnail(calls *[]*NativeCall) NativeTool {
	return NativeTool{
		Name:         "render_thumbnail",
		Description:  "Render a task board thumbnail",
		Identity:     graph.Identity{Service: "boards", Action: "thumbnail", Method: "GET"},
		Errors:       []string{"RATE_LIMITED"},
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"size":{"type":"integer","minimum":16}},"required":["size"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"width":{"type":"integer"}},"required":["width"]}`),
		Handler: func(ctx context.Context, call *NativeCall) (*sdk.CallToolResult, error) {
			*calls = append(*calls, call)
			size, _ := call.Arguments()["size"].(json.Number).Int64()
			switch size {
			case 17:
				return nil, mount.NewError("RATE_LIMITED", "slow down")
			case 18:
				return &sdk.CallToolResult{StructuredContent: map[string]any{"width": "wide"}}, nil
			case 19:
				return nil, mount.NewError("CONFLICT", "not declared by the tool")
			}
			return &sdk.CallToolResult{
				Meta:              sdk.Meta{"app/render": "v2"},
				Content:           []sdk.Content{&sdk.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"}, &sdk.TextContent{Text: "a board"}},
				StructuredContent: map[string]any{"width": size},
			}, nil
		},
	}
}

// A native tool registered through the protected path is validated, keeps
// its MCP content blocks and _meta, has its structuredContent checked, and
// is in the stamp, the manifest and discovery.
func TestNativeTool(t *testing.T) {
	g := tasks(t)
	var calls []*NativeCall
	h, err := New(exampleRunner(t, g, nil, nil), &Options{Native: func(r *Registrar) error {
		if r.Surface() != "admin" {
			return nil
		}
		return r.RegisterTool(thumbnail(&calls))
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, h)
	cs := connect(t, srv.URL+"/mcp/admin", nil)
	names, list := listNames(t, cs)
	cat, _ := h.Catalog("admin")
	checkStamp(t, list.Meta, cat)
	m, err := conformance.BuildManifest(projecttest.New(t, g, nil), &conformance.Options{Native: h.NativeTools()})
	if err != nil {
		t.Fatal(err)
	}
	if err := conformance.AssertDiscovery(m, conformance.Observed{ToolSurfaces: []conformance.ObservedSurface{{Transport: "MCP", Surface: "admin", Names: names}}}); err != nil {
		t.Fatal(err)
	}
	var row *conformance.Operation
	for i := range m.Operations {
		if m.Operations[i].Kind == "native" {
			row = &m.Operations[i]
		}
	}
	if row == nil || row.Service != "boards" || row.Scope != "public" || row.Schemas.Output == "" {
		t.Fatalf("native operation row %+v", row)
	}

	ctx := context.Background()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "render_thumbnail", Arguments: map[string]any{"size": 64}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if len(res.Content) != 2 {
		t.Fatalf("content %+v", res.Content)
	}
	if img, ok := res.Content[0].(*sdk.ImageContent); !ok || img.MIMEType != "image/png" || string(img.Data) != "\x89PNG" {
		t.Fatalf("image block %+v", res.Content[0])
	}
	if res.Meta["app/render"] != "v2" {
		t.Fatalf("handler _meta lost: %v", res.Meta)
	}
	checkStamp(t, res.Meta, cat)
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"width":64}` {
		t.Fatalf("structured %s", sc)
	}

	// Invalid arguments never reach the handler: isError with the code and
	// the validator's issues, so a model can correct itself.
	before := len(calls)
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "render_thumbnail", Arguments: map[string]any{"size": 2, "color": "red"}})
	if err != nil || !res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	var env struct {
		Error   string
		Details struct {
			Issues []struct{ Path, Keyword string }
		}
	}
	if err := json.Unmarshal([]byte(textOf(t, res)), &env); err != nil || env.Error != "VALIDATION_ERROR" || len(env.Details.Issues) != 2 {
		t.Fatalf("envelope %s", textOf(t, res))
	}
	if len(calls) != before {
		t.Fatal("the handler ran on invalid arguments")
	}
	// A handler's error keeps its code; a structuredContent the output
	// schema refuses is an internal error.
	res, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "render_thumbnail", Arguments: map[string]any{"size": 17}})
	if !res.IsError || !strings.Contains(textOf(t, res), `"error":"RATE_LIMITED"`) {
		t.Fatalf("handler error: %s", textOf(t, res))
	}
	internal := `{"error":"INTERNAL_SERVER_ERROR","details":{"message":"Internal server error"}}`
	for _, size := range []int{18, 19} {
		res, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "render_thumbnail", Arguments: map[string]any{"size": size}})
		if !res.IsError || textOf(t, res) != internal {
			t.Fatalf("size %d: %s", size, textOf(t, res))
		}
	}

	// The member surface did not get it.
	member := connect(t, srv.URL+"/mcp/member", nil)
	if names, _ := listNames(t, member); strings.Contains(strings.Join(names, ","), "render_thumbnail") {
		t.Fatal("native tool leaked onto member")
	}
}

// Registration problems fail New with an error naming the tool; nothing
// panics, even for inputs AddTool would panic on.
func TestNativeToolRefused(t *testing.T) {
	ok := thumbnail(new([]*NativeCall))
	cases := map[string]func(*NativeTool){
		"input schema must have":  func(n *NativeTool) { n.InputSchema = json.RawMessage(`{"type":["object"]}`) },
		"input schema: missing":   func(n *NativeTool) { n.InputSchema = nil },
		"duplicate MCP tool name": func(n *NativeTool) { n.Name = "get_task" },
		"no Handler":              func(n *NativeTool) { n.Handler = nil },
		"needs a service":         func(n *NativeTool) { n.Identity.Method = "" },
		"output schema":           func(n *NativeTool) { n.OutputSchema = json.RawMessage(`{"type":`) },
		"tool name":               func(n *NativeTool) { n.Name = "do.thing" },
	}
	for want, mutate := range cases {
		nt := ok
		mutate(&nt)
		_, err := New(exampleRunner(t, tasks(t), nil, nil), &Options{Native: func(r *Registrar) error {
			r.RegisterTool(nt)
			return nil
		}})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "native tool") {
			t.Errorf("%s: %v", want, err)
		}
	}
}

// A tool added through the raw escape hatch is served but has no
// guarantees: it is missing from the stamp and the manifest, and discovery
// says so.
func TestRawServerIsVisible(t *testing.T) {
	g := tasks(t)
	h, err := New(exampleRunner(t, g, nil, nil), &Options{Native: func(r *Registrar) error {
		r.RawServer().AddTool(&sdk.Tool{Name: "raw_echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{}, nil
			})
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, h)
	names, _ := listNames(t, connect(t, srv.URL+"/mcp/member", nil))
	m, _ := conformance.BuildManifest(projecttest.New(t, g, nil), &conformance.Options{Native: h.NativeTools()})
	err = conformance.AssertDiscovery(m, conformance.Observed{ToolSurfaces: []conformance.ObservedSurface{{Transport: "MCP", Surface: "member", Names: names}}})
	if err == nil || !strings.Contains(err.Error(), "raw_echo") {
		t.Fatalf("discovery: %v", err)
	}
}

// An input schema AddTool would panic on is refused with an error.
func TestObjectSchema(t *testing.T) {
	for _, s := range []string{`{}`, `{"type":["object"]}`, `[]`, `{"type":"array"}`, `nope`} {
		if objectSchema("input", json.RawMessage(s)) == nil {
			t.Errorf("%s accepted", s)
		}
	}
	if err := objectSchema("input", json.RawMessage(`{"type":"object"}`)); err != nil {
		t.Error(err)
	}
}

// The runner's hooks see native calls like contract calls: identity (kind
// native, no path), source mcp, and an Authorize refusal stops the call
// before the handler.
func TestNativeToolRunsTheRunnersHooks(t *testing.T) {
	var seen []mount.Identity
	var sources []mount.Source
	opts := &mount.Options{Logger: slog.New(slog.DiscardHandler), Hooks: mount.Hooks{
		Authorize: func(ctx context.Context, c *mount.Call) (context.Context, error) {
			seen = append(seen, c.Identity)
			sources = append(sources, c.Source)
			if _, ok := c.Native.(*sdk.CallToolRequest); !ok {
				t.Errorf("Native is %T", c.Native)
			}
			if c.Identity.Scope != "public" {
				return nil, mount.Forbidden("members only")
			}
			return nil, nil
		},
	}}
	var calls []*NativeCall
	secret := thumbnail(&calls)
	secret.Name, secret.Identity.Action, secret.Identity.Scope = "secret_thumbnail", "secret", "admin"
	h, err := New(exampleRunner(t, tasks(t), opts, nil), &Options{Native: func(r *Registrar) error {
		if r.Surface() != "admin" {
			return nil
		}
		return errors.Join(r.RegisterTool(thumbnail(&calls)), r.RegisterTool(secret))
	}})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, serve(t, h).URL+"/mcp/admin", nil)
	ctx := context.Background()
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "render_thumbnail", Arguments: map[string]any{"size": 20}}); err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "secret_thumbnail", Arguments: map[string]any{"size": 20}})
	if err != nil || !res.IsError || !strings.Contains(textOf(t, res), `"error":"FORBIDDEN"`) {
		t.Fatalf("%v %+v", err, res)
	}
	if len(calls) != 1 {
		t.Fatalf("handler ran %d times", len(calls))
	}
	if len(seen) != 2 || seen[0].Kind != mount.KindNative || seen[0].ID() != "boards.thumbnail" || seen[1].Scope != "admin" || sources[0] != mount.SourceMCP {
		t.Fatalf("identities %+v sources %v", seen, sources)
	}
}
