package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"stitchkit.dev/stitchkit/pkg/project"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

func schema(t testing.TB, g *graph.Graph, text string) graph.Digest {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("bad test schema %s: %v", text, err)
	}
	d, err := g.AddSchema(v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var defaultExpose = []graph.Transport{graph.HTTP, graph.MCP, graph.AGENT}

// itemsGraph is the research §11 fixture, adapted: a contract service
// "items", a runtime tool on all three tool transports, a CLI-only command
// and two realtime contracts. ackType sets the type of the sum ack's field;
// reverse writes every list in reverse order and every schema with its keys
// in another order.
func itemsGraph(t testing.TB, ackType string, reverse bool) *graph.Graph {
	t.Helper()
	g := &graph.Graph{GraphVersion: graph.GraphVersion, DigestVersion: graph.DigestVersion, Name: "items", Version: "1.0.0",
		Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow, FlattenUnionInput: true}}}
	obj := func(a, b string) string {
		if reverse {
			return `{"required":["` + b + `"],"properties":{"` + b + `":{"type":"string"},"` + a + `":{"type":"integer"}},"type":"object"}`
		}
		return `{"type":"object","properties":{"` + a + `":{"type":"integer"},"` + b + `":{"type":"string"}},"required":["` + b + `"]}`
	}
	union := `{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"string"}},"required":["kind"],"additionalProperties":false},{"type":"object","properties":{"kind":{"const":"b"},"y":{"type":"integer"}},"required":["kind"],"additionalProperties":false}]}`
	ops := []graph.Operation{
		{Service: "items", Action: "choose", Method: "POST", Path: "/choose", Desc: "Choose a projection", Scope: "user",
			Expose: defaultExpose, Input: schema(t, g, union)},
		{Service: "items", Action: "list", Method: "GET", Path: "/", Desc: "List items", Scope: "user",
			Expose: []graph.Transport{graph.HTTP, graph.MCP, graph.AGENT, graph.CLI}, Query: schema(t, g, obj("limit", "cursor")),
			Output: schema(t, g, obj("count", "next"))},
		{Service: "items", Action: "read", Method: "GET", Path: "/{id}", Desc: "Read an item", Scope: "user", Expose: defaultExpose,
			Params: schema(t, g, `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`), ParamsSynthesized: true,
			Output: schema(t, g, obj("size", "name"))},
		{Service: "items", Action: "secret", Method: "DELETE", Path: "/", Desc: "Tools only", Scope: "admin",
			Expose: []graph.Transport{graph.MCP}},
		{Service: "items", Action: "head", Method: "HEAD", Path: "/{id}", Desc: "Probe an item", Scope: "user",
			Expose: []graph.Transport{graph.HTTP}, Params: schema(t, g, `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)},
	}
	slices.SortFunc(ops, func(a, b graph.Operation) int { return strings.Compare(a.Action, b.Action) })
	g.Services = []graph.Service{{Name: "items", Prefix: "/items", Scope: "user", Operations: ops}}
	g.RuntimeTools = []graph.RuntimeTool{{Name: "jobs_status", Desc: "Job status", Identity: graph.Identity{Service: "jobs", Action: "status", Method: "GET"},
		Input: schema(t, g, obj("verbose", "job")), Transports: []graph.Transport{graph.MCP, graph.AGENT, graph.CLI}}}
	g.CliCommands = []graph.CliCommand{{Name: "doctor", Desc: "Check the installation"},
		{Name: "export", Desc: "Export data", Input: schema(t, g, obj("limit", "format")), Output: schema(t, g, `{"type":"string"}`)}}
	sum := graph.Event{Name: "sum", Args: schema(t, g, `{"type":"array","prefixItems":[{"type":"number"},{"type":"number"}],"items":false}`),
		Ack: schema(t, g, `{"type":"object","properties":{"total":{"type":"`+ackType+`"}},"required":["total"]}`)}
	// No arguments, as the compiler writes it ("prefixItems": [] is not a
	// valid schema, and a projection compiles every schema).
	ping := graph.Event{Name: "ping", Args: schema(t, g, `{"type":"array","items":false}`)}
	tick := graph.Event{Name: "tick", Args: schema(t, g, `{"type":"array","prefixItems":[{"type":"integer"}],"items":false}`)}
	primary := graph.RealtimeContract{Name: "primary", ServerToClient: []graph.Event{tick}, ClientToServer: []graph.Event{ping, sum}}
	g.Realtime = []graph.RealtimeContract{{Name: "empty"}, primary}
	if reverse {
		primary.ClientToServer = []graph.Event{sum, ping}
		g.Realtime = []graph.RealtimeContract{primary, {Name: "empty"}}
	}
	return g
}

// buildOptions are the options of a test build: the projection's HTTP
// prefix and the manifest's own options.
type buildOptions struct {
	HTTPPrefix string
	Extensions []Extension
}

func build(t testing.TB, g *graph.Graph, o *buildOptions) *Manifest {
	t.Helper()
	if o == nil {
		o = &buildOptions{}
	}
	m, err := BuildManifest(projecttest.Prefixed(t, g, o.HTTPPrefix), &Options{Extensions: o.Extensions})
	if err != nil {
		t.Fatalf("BuildManifest: %v", err)
	}
	return m
}

func encode(t testing.TB, m *Manifest) []byte {
	t.Helper()
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var testOpts = &buildOptions{HTTPPrefix: "/api/v1", Extensions: []Extension{
	{Name: "metrics", Transport: TransportHTTP}, {Name: "healthz", Transport: TransportHTTP}, {Name: "admin", Transport: TransportCLI}}}

func TestBuildManifestRows(t *testing.T) {
	m := build(t, itemsGraph(t, "number", false), testOpts)
	var ops []string
	for _, op := range m.Operations {
		var rows []string
		for _, r := range op.HTTP {
			rows = append(rows, r.Method+" "+r.Path)
		}
		ops = append(ops, op.Kind+" "+op.Service+"."+op.Action+" ["+strings.Join(rows, ", ")+"]")
	}
	want := []string{
		"contract items.choose [POST /api/v1/items/choose]",
		"contract items.head [HEAD /api/v1/items/{id}]",
		"contract items.list [GET /api/v1/items]",
		"contract items.read [GET /api/v1/items/{id}]",
		"contract items.secret []",
		"runtime jobs.status []",
	}
	if !slices.Equal(ops, want) {
		t.Errorf("operations\n got %q\nwant %q", ops, want)
	}
	read := m.Operations[3]
	if read.Schemas.Params == "" || read.Schemas.Input != "" || read.Scope != "user" || read.Method != "GET" {
		t.Errorf("read row %+v", read)
	}
	var surfaces []string
	for _, s := range m.ToolSurfaces {
		var names []string
		for _, tool := range s.Tools {
			names = append(names, tool.Name)
		}
		surfaces = append(surfaces, s.Transport+":"+s.Surface+"="+strings.Join(names, ","))
	}
	wantSurf := []string{
		"AGENT:=choose_item,jobs_status,list_items,read_item",
		"CLI:=jobs_status,list_items",
		"MCP:=choose_item,jobs_status,list_items,read_item,secret_item",
	}
	if !slices.Equal(surfaces, wantSurf) {
		t.Errorf("tool surfaces\n got %q\nwant %q", surfaces, wantSurf)
	}
	if !slices.Equal(m.RealtimeContracts, []string{"empty", "primary"}) {
		t.Errorf("realtimeContracts %v", m.RealtimeContracts)
	}
	var rows []string
	for _, r := range m.Realtime {
		rows = append(rows, r.Contract+"."+r.Direction+"."+r.Event)
		if r.Args.Input != r.Args.Output || r.Args.Input == "" {
			t.Errorf("%s args %+v", r.Event, r.Args)
		}
		if (r.Event == "sum") != (r.Acknowledgement != nil) {
			t.Errorf("%s acknowledgement %+v", r.Event, r.Acknowledgement)
		}
	}
	if want := []string{"primary.serverToClient.tick", "primary.clientToServer.ping", "primary.clientToServer.sum"}; !slices.Equal(rows, want) {
		t.Errorf("realtime rows %q", rows)
	}
	if m.CliOnly[0].Name != "doctor" || m.CliOnly[0].Input != "44136fa355b3678a" || m.CliOnly[0].Output != "" {
		t.Errorf("cliOnly %+v", m.CliOnly)
	}
	if d, _ := graph.DigestOf(map[string]any{}); d != m.CliOnly[0].Input {
		t.Errorf("digest({}) = %s", d)
	}
	if want := []Extension{{"admin", "CLI"}, {"healthz", "HTTP"}, {"metrics", "HTTP"}}; !slices.Equal(m.Extensions, want) {
		t.Errorf("extensions %v", m.Extensions)
	}
	b := encode(t, m)
	for _, s := range []string{`"surface": null`, `"acknowledgement": null`, `"params": null`, `"output": null`} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("encoded manifest lacks %s", s)
		}
	}
}

func TestManifestBytesAreStable(t *testing.T) {
	base := encode(t, build(t, itemsGraph(t, "number", false), testOpts))
	if again := encode(t, build(t, itemsGraph(t, "number", false), testOpts)); !bytes.Equal(base, again) {
		t.Fatal("two builds differ")
	}
	// Reordered fields, events, contracts and extensions: same bytes.
	reordered := &buildOptions{HTTPPrefix: "/api/v1/", Extensions: slices.Clone(testOpts.Extensions)}
	slices.Reverse(reordered.Extensions)
	if b := encode(t, build(t, itemsGraph(t, "number", true), reordered)); !bytes.Equal(base, b) {
		diff, _ := CompareManifest(build(t, itemsGraph(t, "number", false), testOpts), build(t, itemsGraph(t, "number", true), reordered))
		t.Errorf("reordering changed the bytes:\n%s", diff)
	}
	// Changing an ack's field type changes them, and the diff names the row.
	changed := build(t, itemsGraph(t, "string", false), testOpts)
	if bytes.Equal(base, encode(t, changed)) {
		t.Fatal("changing the ack type left the bytes unchanged")
	}
	diff, equal := CompareManifest(build(t, itemsGraph(t, "number", false), testOpts), changed)
	if equal || !strings.Contains(diff, "realtime[primary clientToServer sum].acknowledgement.input") {
		t.Errorf("diff does not name the ack:\n%s", diff)
	}
	// Canonical bytes are the indented bytes without whitespace.
	c, _ := changed.Canonical()
	var compact bytes.Buffer
	_ = json.Compact(&compact, encode(t, changed))
	if !bytes.Equal(c, compact.Bytes()) {
		t.Error("Encode is not the indented canonical form")
	}
}

func TestNamedSurfacesListWhatTheySelect(t *testing.T) {
	g := itemsGraph(t, "number", false)
	g.Surfaces = graph.Surfaces{
		MCP: &graph.MCPSurfaces{Named: []graph.NamedSelection{
			{Name: "admin", Selection: graph.Selection{Include: []string{"items.*", "runtime.jobs_status"}}},
			{Name: "member", Selection: graph.Selection{Include: []string{"runtime.jobs_status"}}},
		}},
		Agent: &graph.Selection{Include: []string{"items.read"}},
		CLI:   &graph.Selection{Include: []string{}},
	}
	m := build(t, g, nil)
	got := map[string][]string{}
	for _, s := range m.ToolSurfaces {
		key := s.Transport + ":" + s.Surface
		got[key] = []string{}
		for _, tool := range s.Tools {
			got[key] = append(got[key], tool.Name)
		}
	}
	want := map[string][]string{
		"AGENT:":     {"read_item"},
		"CLI:":       {},
		"MCP:admin":  {"choose_item", "jobs_status", "list_items", "read_item", "secret_item"},
		"MCP:member": {"jobs_status"},
	}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("surfaces %v", got)
	}
	// The runtime tool has one digest on both named surfaces.
	if m.ToolSurfaces[2].Tools[1].Input != m.ToolSurfaces[3].Tools[0].Input {
		t.Error("runtime tool digest differs between named surfaces")
	}
	// Discovery of the default MCP surface fails: only named ones exist.
	err := AssertDiscovery(m, Observed{MCP: []string{}})
	if err == nil || err.Error() != `MCP surface "(default)" is not declared in the manifest` {
		t.Errorf("default discovery against named surfaces: %v", err)
	}
	if err := AssertDiscovery(m, Observed{ToolSurfaces: []ObservedSurface{
		{Transport: "MCP", Surface: "admin", Names: []string{"secret_item", "read_item", "list_items", "jobs_status", "choose_item"}},
		{Transport: "MCP", Surface: "member", Names: []string{"jobs_status"}},
	}, AGENT: []string{"read_item"}, CLI: []string{}}); err != nil {
		t.Error(err)
	}
}

// A digest differs between surfaces only when the presentation does: MCP
// flattens the union (policy), Agent does not.
func TestDigestsDifferOnlyWithPresentation(t *testing.T) {
	m := build(t, itemsGraph(t, "number", false), nil)
	input := func(transport, name string) graph.Digest {
		for _, s := range m.ToolSurfaces {
			if s.Transport == transport {
				for _, tool := range s.Tools {
					if tool.Name == name {
						return tool.Input
					}
				}
			}
		}
		t.Fatalf("%s %s not found", transport, name)
		return ""
	}
	if input("MCP", "choose_item") == input("AGENT", "choose_item") {
		t.Error("flattened MCP and unflattened Agent share a digest")
	}
	for _, name := range []string{"list_items", "read_item", "jobs_status"} {
		if input("MCP", name) != input("AGENT", name) {
			t.Errorf("%s: plain operation, different digests", name)
		}
	}
	if input("CLI", "list_items") != input("MCP", "list_items") {
		t.Error("list_items: CLI and MCP differ without a presentation difference")
	}
}

// buildErr is the error of projecting g and building its manifest: the
// projection refuses what cannot be served, the manifest what it cannot
// record.
func buildErr(g *graph.Graph) error {
	p, err := project.New(g, nil)
	if err != nil {
		return err
	}
	_, err = BuildManifest(p, nil)
	return err
}

func TestBuildManifestErrors(t *testing.T) {
	g := itemsGraph(t, "number", false)
	g.Surfaces.MCP = &graph.MCPSurfaces{Default: &graph.Selection{}, Named: []graph.NamedSelection{{Name: "x"}}}
	if err := buildErr(g); err == nil || !strings.Contains(err.Error(), "Surface manifest MCP topology must use either one direct surface or named surfaces") {
		t.Errorf("topology: %v", err)
	}
	g = itemsGraph(t, "number", false)
	rt := g.RuntimeTools[0]
	rt.Name = "jobs_status2"
	g.RuntimeTools = append(g.RuntimeTools, rt)
	if err := buildErr(g); err == nil || !strings.Contains(err.Error(), "Conflicting runtime operation identity jobs.status") {
		t.Errorf("identity conflict: %v", err)
	}
	g = itemsGraph(t, "number", false)
	g.Policy.MCP.FlattenUnionInput = false
	if err := buildErr(g); err == nil || !strings.Contains(err.Error(), "input must be an object schema") {
		t.Errorf("throw policy: %v", err)
	}
	// Under skip the union tool disappears from MCP, and so from the manifest.
	g.Policy.MCP.SchemaValidation = graph.ValidationSkip
	m := build(t, g, nil)
	if err := AssertDiscovery(m, Observed{MCP: []string{"jobs_status", "list_items", "read_item", "secret_item"}}); err != nil {
		t.Error(err)
	}
}

func TestDecodeManifest(t *testing.T) {
	m := build(t, itemsGraph(t, "number", false), testOpts)
	b := encode(t, m)
	back, err := DecodeManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff, eq := CompareManifest(m, back); !eq {
		t.Errorf("round trip differs:\n%s", diff)
	}
	old := bytes.Replace(b, []byte(`"manifestVersion": 2`), []byte(`"manifestVersion": 1`), 1)
	_, err = DecodeManifest(old)
	var ve *VersionError
	if !errors.As(err, &ve) || err.Error() != "Surface snapshot is manifestVersion 1; this build writes 2. Regenerate it and review the diff — the format changed, so the first regeneration is expected to be large." {
		t.Errorf("old version: %v", err)
	}
	extra := bytes.Replace(b, []byte(`"digestVersion": 1,`), []byte(`"digestVersion": 1, "extra": true,`), 1)
	if _, err := DecodeManifest(extra); err == nil {
		t.Error("unknown field accepted")
	}
}
