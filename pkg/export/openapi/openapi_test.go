package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"stitchkit.dev/stitchkit/pkg/export/openapi"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

func generate(t *testing.T, g *graph.Graph, prefix string, opts *openapi.Options) []byte {
	t.Helper()
	b, err := openapi.Generate(projecttest.Prefixed(t, g, prefix), opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// validate loads doc with kin-openapi and validates it as OpenAPI 3.1.
func validate(t *testing.T, doc []byte) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	d, err := loader.LoadFromData(doc)
	if err != nil {
		t.Fatalf("kin-openapi load: %v\n%s", err, doc)
	}
	if !d.IsOpenAPI31OrLater() {
		t.Fatalf("not a 3.1 document: %q", d.OpenAPI)
	}
	if err := d.Validate(context.Background()); err != nil {
		t.Fatalf("kin-openapi validate: %v\n%s", err, doc)
	}
	return d
}

func TestGenerateValidates(t *testing.T) {
	g := tasksGraph(t, false)
	doc := generate(t, g, "/api", &openapi.Options{Servers: []openapi.Server{{URL: "https://example.com", Description: "prod"}}})
	if os.Getenv("DUMP") != "" {
		os.Stdout.Write(doc)
	}
	validate(t, doc)
	if !bytes.HasSuffix(doc, []byte("}\n")) || !bytes.HasPrefix(doc, []byte("{\n  \"")) {
		t.Errorf("document is not two-space indented JSON ending in a newline")
	}
}

// TestPathsEqualProjector pins DESIGN invariant 1: the document's
// (method, path) pairs are exactly project.HTTPRoutes.
func TestPathsEqualProjector(t *testing.T) {
	for _, prefix := range []string{"", "/api", "/v1/x/"} {
		g := tasksGraph(t, false)
		d := validate(t, generate(t, g, prefix, nil))
		var got []string
		for _, p := range d.Paths.Keys() {
			for m := range d.Paths.Value(p).Operations() {
				got = append(got, m+" "+p)
			}
		}
		var want []string
		for _, r := range project.HTTPRoutes(g, project.HTTPOptions{Prefix: prefix}) {
			want = append(want, r.Pattern())
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("prefix %q:\n got %v\nwant %v", prefix, got, want)
		}
	}
}

func TestByteStable(t *testing.T) {
	a := generate(t, tasksGraph(t, false), "/api", nil)
	for i := 0; i < 5; i++ {
		if b := generate(t, tasksGraph(t, false), "/api", nil); !bytes.Equal(a, b) {
			t.Fatal("two runs differ")
		}
	}
	if b := generate(t, tasksGraph(t, true), "/api", nil); !bytes.Equal(a, b) {
		t.Fatal("graph built in another order gives other bytes")
	}
	if c := generate(t, tasksGraph(t, false), "", nil); bytes.Equal(a, c) {
		t.Fatal("prefix ignored")
	}
}

func decodeDoc(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func get(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[p]; !ok {
				t.Fatalf("missing %q in path %v", p, path)
			}
		case []any:
			i := 0
			for _, c := range p {
				i = i*10 + int(c-'0')
			}
			if i >= len(x) {
				t.Fatalf("index %s out of range in %v", p, path)
			}
			v = x[i]
		default:
			t.Fatalf("cannot index %T with %q (path %v)", v, p, path)
		}
	}
	return v
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOperationShape(t *testing.T) {
	m := decodeDoc(t, generate(t, tasksGraph(t, false), "/api", nil))
	paths := get(t, m, "paths").(map[string]any)
	if _, ok := paths["/api/tasks/mcp-only"]; ok {
		t.Error("operation not exposed on HTTP is documented")
	}
	if s := mustJSON(t, m); strings.Contains(s, "whoami") {
		t.Error("runtime tool is documented")
	}
	if s := mustJSON(t, m); strings.Contains(s, "$defs") || strings.Contains(s, "$schema") {
		t.Error("$defs or $schema left in the document")
	}

	get1 := get(t, paths, "/api/tasks/{id}", "get").(map[string]any)
	if get1["operationId"] != "tasks_get" || get1["summary"] != "Get one task" || get1["x-stitchkit-scope"] != "user" {
		t.Errorf("identity fields: %v", get1)
	}
	if got := mustJSON(t, get1["security"]); got != `[{"stitchkit":["user"]}]` {
		t.Errorf("security = %s", got)
	}
	if got := mustJSON(t, get1["tags"]); got != `["tasks"]` {
		t.Errorf("tags = %s", got)
	}
	if got := mustJSON(t, get(t, get1, "parameters", "0")); got != `{"in":"path","name":"id","required":true,"schema":{"type":"string"}}` {
		t.Errorf("path parameter = %s", got)
	}
	if got := mustJSON(t, get(t, get1, "responses", "200", "content", "application/json", "schema")); got != `{"$ref":"#/components/schemas/Task"}` {
		t.Errorf("output = %s", got)
	}
	resp := get(t, get1, "responses").(map[string]any)
	var statuses []string
	for s := range resp {
		statuses = append(statuses, s)
	}
	slices.Sort(statuses)
	if got := strings.Join(statuses, ","); got != "200,400,401,403,404,500" {
		t.Errorf("statuses = %s", got)
	}
	for st, want := range map[string]string{
		"400": `["BAD_REQUEST","VALIDATION_ERROR"]`,
		"401": `["UNAUTHORIZED"]`, "403": `["FORBIDDEN"]`,
		"404": `["TASK_GONE","TASK_NOT_FOUND"]`, "500": `["INTERNAL_SERVER_ERROR"]`,
	} {
		if got := mustJSON(t, get(t, resp, st, "content", "application/json", "schema", "properties", "error", "properties", "code", "enum")); got != want {
			t.Errorf("%s codes = %s, want %s", st, got, want)
		}
	}

	list := get(t, paths, "/api/tasks", "get").(map[string]any)
	params := get(t, list, "parameters").([]any)
	if len(params) != 3 {
		t.Fatalf("list parameters = %s", mustJSON(t, params))
	}
	if got := mustJSON(t, params[0]); got != `{"in":"query","name":"cursor","required":false,"schema":{"type":"string"}}` {
		t.Errorf("cursor = %s", got)
	}
	if got := mustJSON(t, params[2]); got != `{"explode":true,"in":"query","name":"tag","required":true,"schema":{"items":{"type":"string"},"type":"array"},"style":"form"}` {
		t.Errorf("tag = %s", got)
	}
	if got := mustJSON(t, get(t, list, "responses", "200", "content", "application/json", "schema", "properties", "items")); got != `{"items":{"$ref":"#/components/schemas/Task"},"type":"array"}` {
		t.Errorf("list items = %s", got)
	}
	if _, ok := list["requestBody"]; ok {
		t.Error("GET has a request body")
	}

	create := get(t, paths, "/api/tasks", "post").(map[string]any)
	if got := get(t, create, "requestBody", "required"); got != true {
		t.Errorf("create body required = %v", got)
	}
	purge := get(t, paths, "/api/tasks", "delete").(map[string]any)
	if got := mustJSON(t, get(t, purge, "responses", "204")); got != `{"description":"No content"}` {
		t.Errorf("purge 204 = %s", got)
	}
	if got := mustJSON(t, purge["security"]); got != `[{"stitchkit":["admin"]}]` {
		t.Errorf("purge security = %s", got)
	}

	ping := get(t, paths, "/api/health", "get").(map[string]any)
	if got := mustJSON(t, ping["security"]); got != `[]` {
		t.Errorf("public security = %s", got)
	}
	resp = get(t, ping, "responses").(map[string]any)
	if _, ok := resp["401"]; ok {
		t.Error("public operation documents 401")
	}
	if _, ok := get(t, paths, "/api/health", "head", "responses").(map[string]any)["200"]; !ok {
		t.Error("HEAD has no 200")
	}

	file := get(t, paths, "/api/tasks/{id}/files/{rest...}", "get").(map[string]any)
	if file["x-stitchkit-trailing-wildcard"] != "rest" {
		t.Errorf("wildcard extension = %v", file["x-stitchkit-trailing-wildcard"])
	}
	if got := get(t, file, "parameters", "1", "name"); got != "rest..." {
		t.Errorf("wildcard parameter name = %v", got)
	}

	if got := mustJSON(t, get(t, m, "components", "schemas", "Task", "required")); got != `["done","id","title"]` {
		t.Errorf("Task component = %s", got)
	}
	if got := get(t, m, "components", "securitySchemes", "stitchkit", "scheme"); got != "bearer" {
		t.Errorf("security scheme = %v", got)
	}
	if got := mustJSON(t, get(t, m, "info")); got != `{"description":"Track tasks.","title":"Tasks API","version":"1.0.0"}` {
		t.Errorf("info = %s", got)
	}
}

// TestValidatorCatchesBrokenDocument makes sure the kin-openapi check above
// can fail: a document missing a path parameter must be refused.
func TestValidatorCatchesBrokenDocument(t *testing.T) {
	doc := generate(t, tasksGraph(t, false), "", nil)
	broken := bytes.Replace(doc, []byte(`"name": "rest..."`), []byte(`"name": "rest"`), 1)
	if bytes.Equal(doc, broken) {
		t.Fatal("fixture did not change")
	}
	d, err := openapi3.NewLoader().LoadFromData(broken)
	if err != nil {
		return
	}
	if err := d.Validate(context.Background()); err == nil {
		t.Fatal("kin-openapi accepted a document whose path parameter does not match its template")
	}
}

// TestGenerateErrors: a graph the exporter could only describe lossily
// does not project, so no document is written from it.
func TestGenerateErrors(t *testing.T) {
	gen := func(g *graph.Graph) error {
		p, err := project.New(g, nil)
		if err == nil {
			_, err = openapi.Generate(p, nil)
		}
		return err
	}
	g := tasksGraph(t, false)
	g.Services[1].Operations[3].Errors = []string{"NOPE"}
	if err := gen(g); err == nil || !strings.Contains(err.Error(), "NOPE") {
		t.Errorf("unknown error code: err = %v", err)
	}
	g = tasksGraph(t, false)
	g.Services[1].Operations[3].Output = "0000000000000000"
	if err := gen(g); err == nil || !strings.Contains(err.Error(), "tasks.get") {
		t.Errorf("missing schema: err = %v", err)
	}
	g = tasksGraph(t, false)
	g.Services[1].Operations[4].Query = add(t, g, map[string]any{"type": "string"})
	if err := gen(g); err == nil || !strings.Contains(err.Error(), "tasks.list") {
		t.Errorf("non-object query: err = %v", err)
	}
}

// TestCollidingDefinitionNames: two different $defs named Task get
// owner-prefixed component names and the document still validates.
func TestCollidingDefinitionNames(t *testing.T) {
	g := tasksGraph(t, false)
	other := add(t, g, withDefs(ref("Task"), map[string]any{"Task": map[string]any{"type": "string"}}))
	g.Services[0].Operations[0].Output = other // health.ping
	doc := generate(t, g, "", nil)
	validate(t, doc)
	m := decodeDoc(t, doc)
	comps := get(t, m, "components", "schemas").(map[string]any)
	var names []string
	for n := range comps {
		names = append(names, n)
	}
	slices.Sort(names)
	if got := strings.Join(names, ","); got != "health_ping_output_Task,tasks_list_output_Task" {
		t.Errorf("components = %s", got)
	}
	if got := mustJSON(t, get(t, m, "paths", "/health", "get", "responses", "200", "content", "application/json", "schema")); got != `{"$ref":"#/components/schemas/health_ping_output_Task"}` {
		t.Errorf("ping output = %s", got)
	}
}
