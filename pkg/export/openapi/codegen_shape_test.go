package openapi_test

import (
	"context"
	"path/filepath"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/export/openapi"
)

// TestShapeForCodeGenerators pins what code generators and linters read,
// on examples/tasks: named definitions are components referenced by $ref
// (also where the contract's schema is the definition itself, which the
// graph holds inlined); enums state their type; the contract's examples
// are OpenAPI examples; servers, tags and info are complete. kin-openapi
// validates the document.
func TestShapeForCodeGenerators(t *testing.T) {
	g, err := check.Compile(context.Background(), filepath.Join(moduleRoot(t), "examples", "tasks"))
	if err != nil {
		t.Fatal(err)
	}
	doc := generate(t, g, "", &openapi.Options{
		License: &openapi.License{Name: "MIT", URL: "https://opensource.org/license/mit"},
		Contact: &openapi.Contact{Name: "Tasks team", Email: "tasks@stitchkit.dev"},
	})
	validate(t, doc)
	m := decodeDoc(t, doc)
	out := func(path, method string) string {
		return mustJSON(t, get(t, m, "paths", path, method, "responses", "200", "content", "application/json", "schema"))
	}
	for _, p := range [][2]string{{"/tasks/{id}", "get"}, {"/tasks", "post"}, {"/tasks/{id}/complete", "post"}} {
		if got := out(p[0], p[1]); got != `{"$ref":"#/components/schemas/Task"}` {
			t.Errorf("%s %s answers %s; want the Task component", p[1], p[0], got)
		}
	}
	if got := out("/v1/files/content/{path...}", "get"); got != `{"$ref":"#/components/schemas/File"}` {
		t.Errorf("get_file answers %s", got)
	}
	// An operation's own inline schema stays inline.
	if got := out("/tasks/{id}/notify", "post"); !strings.HasPrefix(got, `{"additionalProperties":false,"properties":{"sent"`) {
		t.Errorf("notify answers %s", got)
	}
	// Enums are typed.
	fields := mustJSON(t, get(t, m, "paths", "/tasks/search", "get", "parameters"))
	if !strings.Contains(fields, `"items":{"enum":["tags","title"],"type":"string"}`) {
		t.Errorf("search fields enum is untyped: %s", fields)
	}
	// Examples from the contract.
	if got := mustJSON(t, get(t, m, "paths", "/tasks/{id}/notify", "post", "requestBody", "content", "application/json", "examples")); got !=
		`{"example1":{"summary":"Example 1 from the contract","value":{"address":"ada@example.com","kind":"email"}},"example2":{"summary":"Example 2 from the contract","value":{"kind":"sms","phone":"+15550100"}}}` {
		t.Errorf("notify request examples = %s", got)
	}
	if got := mustJSON(t, get(t, m, "paths", "/tasks/{id}/notify", "post", "responses", "200", "content", "application/json", "examples", "example1", "value")); got != `{"sent":true}` {
		t.Errorf("notify response example = %s", got)
	}
	params := get(t, m, "paths", "/tasks", "get", "parameters").([]any)
	var tagParam map[string]any
	for _, p := range params {
		if pm := p.(map[string]any); pm["name"] == "tag" {
			tagParam = pm
		}
	}
	if got := mustJSON(t, tagParam["examples"]); got != `{"example1":{"summary":"Example 1 from the contract","value":["docs"]}}` {
		t.Errorf("list ?tag examples = %s", got)
	}
	// servers, tags, info.
	if got := mustJSON(t, m["servers"]); got != `[{"url":"/"}]` {
		t.Errorf("default servers = %s", got)
	}
	if got := mustJSON(t, get(t, m, "tags")); !strings.Contains(got, `{"description":"Operations of the files service under /v1/files: get, list, upload.","name":"files"}`) {
		t.Errorf("tags = %s", got)
	}
	if got := mustJSON(t, get(t, m, "info", "license")); got != `{"name":"MIT","url":"https://opensource.org/license/mit"}` {
		t.Errorf("license = %s", got)
	}
	if got := mustJSON(t, get(t, m, "info", "contact")); got != `{"email":"tasks@stitchkit.dev","name":"Tasks team"}` {
		t.Errorf("contact = %s", got)
	}
	for _, bad := range []*openapi.Options{
		{License: &openapi.License{Name: "MIT", Identifier: "MIT", URL: "https://x"}},
		{License: &openapi.License{Identifier: "MIT"}},
		{Servers: []openapi.Server{{Description: "no URL"}}},
	} {
		if _, err := openapi.Generate(projecttest.New(t, g, nil), bad); err == nil {
			t.Errorf("Generate accepted %+v", bad)
		}
	}
}

// TestShapeBilling pins the components of a payments contract
// (testdata/billing): a definition used only whole (#Customer, #Endpoint)
// is a component, found in the contract's sources; a definition the graph
// inlines into a nullable field or a conjunction is referred to there; no
// component is left that nothing refers to.
func TestShapeBilling(t *testing.T) {
	g, err := check.Compile(context.Background(), filepath.Join("testdata", "billing"))
	if err != nil {
		t.Fatal(err)
	}
	doc := generate(t, g, "", nil)
	validate(t, doc)
	m := decodeDoc(t, doc)
	out := func(path, method string) string {
		return mustJSON(t, get(t, m, "paths", path, method, "responses", "200", "content", "application/json", "schema"))
	}
	for p, want := range map[[2]string]string{
		{"/v1/customers", "post"}:            "Customer",
		{"/v1/customers/{id}", "get"}:        "Customer",
		{"/v1/customers/{id}/cards", "post"}: "Card",
		{"/v1/webhook_endpoints", "post"}:    "Endpoint",
		{"/v1/charges/{charge}", "get"}:      "Charge",
		{"/v1/refunds", "post"}:              "Refund",
	} {
		if got := out(p[0], p[1]); got != `{"$ref":"#/components/schemas/`+want+`"}` {
			t.Errorf("%s %s answers %s; want the %s component", p[1], p[0], got, want)
		}
	}
	comps := get(t, m, "components", "schemas").(map[string]any)
	if got := mustJSON(t, get(t, comps, "Refund", "properties", "reason")); got != `{"anyOf":[{"$ref":"#/components/schemas/RefundReason"},{"type":"null"}]}` {
		t.Errorf("#Refund.reason (#RefundReason | null) = %s", got)
	}
	if got := mustJSON(t, get(t, comps, "Charge", "properties", "customer")); got != `{"allOf":[{"$ref":"#/components/schemas/CustomerID"},{"pattern":"^cus_[a-z0-9]{6,}$"}]}` {
		t.Errorf(`#Charge.customer (#CustomerID & =~"…") = %s`, got)
	}
	for name := range comps {
		if !strings.Contains(string(doc), `"#/components/schemas/`+name+`"`) {
			t.Errorf("component %s is never referred to", name)
		}
	}
}
