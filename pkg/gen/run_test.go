package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// goTool returns the go command of the toolchain running the test.
func goTool(t *testing.T) string {
	t.Helper()
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		if p, err = exec.LookPath("go"); err != nil {
			t.Fatal("no go command to build generated code with") // go test puts its own on PATH
		}
	}
	return p
}

// tempModule makes a module in a temporary directory that requires this
// repository through a replace directive, so generated packages build
// exactly as they would in a user's module.
func tempModule(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod := fmt.Sprintf("module gentest\n\ngo 1.26\n\nrequire stitchkit.dev/stitchkit v0.0.0\n\nreplace stitchkit.dev/stitchkit => %s\n", strconv.Quote(root))
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// goRun runs the go command in dir, offline, and returns its output.
func goRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// roundTrip is one value the driver decodes into a generated type and
// encodes again.
type roundTrip struct {
	label, pkg, typ string
	digest          graph.Digest
	value           string
}

// exampleTrips lists every example part of g (params, query, input,
// output, args, ack) with the generated type that carries it.
func exampleTrips(t *testing.T, g *graph.Graph, pkg string) []roundTrip {
	t.Helper()
	var out []roundTrip
	add := func(label, typ string, d graph.Digest, raw json.RawMessage) {
		if d == "" || raw == nil {
			return
		}
		out = append(out, roundTrip{label: label, pkg: pkg, typ: typ, digest: d, value: string(raw)})
	}
	parts := func(raw json.RawMessage) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, op := range g.Operations() {
		base := exportName(op.Service) + exportName(op.Action)
		for i, ex := range op.Examples {
			p := parts(ex)
			l := fmt.Sprintf("%s example %d", op.ID(), i)
			add(l+" params", base+"Params", op.Params, p["params"])
			add(l+" query", base+"Query", op.Query, p["query"])
			add(l+" input", base+"Input", op.Input, p["input"])
			add(l+" output", base+"Output", op.Output, p["output"])
		}
	}
	for _, rt := range g.RuntimeTools {
		for i, ex := range rt.Examples {
			p := parts(ex)
			l := fmt.Sprintf("runtime %s example %d", rt.Name, i)
			add(l+" input", exportName(rt.Name)+"Input", rt.Input, p["input"])
			add(l+" output", exportName(rt.Name)+"Output", rt.Output, p["output"])
		}
	}
	for _, rc := range g.Realtime {
		for _, ev := range append(append([]graph.Event(nil), rc.ServerToClient...), rc.ClientToServer...) {
			base := exportName(rc.Name) + exportName(ev.Name)
			for i, ex := range ev.Examples {
				p := parts(ex)
				l := fmt.Sprintf("realtime %s.%s example %d", rc.Name, ev.Name, i)
				add(l+" args", base+"Args", ev.Args, p["args"])
				add(l+" ack", base+"Ack", ev.Ack, p["ack"])
			}
		}
	}
	return out
}

// TestGeneratedCodeRuns generates the test packages into a fresh module,
// vets and runs a program that carries every contract example (checked by
// CUE itself when the contract compiled) and every corpus value through the
// generated types — json.Unmarshal, then json.Marshal — and requires the
// result to equal the original and to pass the schema's validator. It then
// proves that a program built from generated code links neither CUE nor
// package testing.
func TestGeneratedCodeRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated code with the go command")
	}
	gs := testGraphs(t)
	dir := tempModule(t)
	var trips []roundTrip
	pkgs := []string{"tasks", "minimal", "mappings", "schemas", "library", "fleet", "ledger"}
	for _, name := range pkgs {
		pkg := name + "api"
		files := generate(t, gs[name], pkg)
		if err := os.MkdirAll(filepath.Join(dir, pkg), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, pkg, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		trips = append(trips, exampleTrips(t, gs[name], pkg)...)
	}
	values := corpusValues(t)
	for _, c := range gs["schemas"].CliCommands {
		vs := values[c.Name]
		if len(vs) == 0 {
			t.Fatalf("schemas.txtar: %s has no .values section", c.Name)
		}
		for i, v := range vs {
			trips = append(trips, roundTrip{label: fmt.Sprintf("corpus %s value %d", c.Name, i), pkg: "schemasapi",
				typ: exportName(c.Name) + "CommandInput", digest: c.Input, value: v})
		}
	}
	if len(trips) < 40 {
		t.Fatalf("only %d round trips: the corpus lost its examples", len(trips))
	}

	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"stitchkit.dev/stitchkit/pkg/graph\"\n")
	for _, name := range pkgs {
		fmt.Fprintf(&b, "\t\"gentest/%sapi\"\n", name)
	}
	b.WriteString(")\n\nvar graphs = map[string]*graph.Graph{\n")
	for _, name := range pkgs {
		fmt.Fprintf(&b, "\t%q: %sapi.Graph(),\n", name+"api", name)
	}
	b.WriteString("}\n\nvar trips = []trip{\n")
	for _, tr := range trips {
		fmt.Fprintf(&b, "\t{%q, %q, %q, %q, roundTrip[%s.%s]},\n", tr.label, tr.pkg, tr.digest, tr.value, tr.pkg, tr.typ)
	}
	b.WriteString("}\n")
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("trips.go", b.String())
	write("main.go", driverSource)
	write("behaviour.go", behaviourSource)
	write("calls.go", callsSource(gs, pkgs))
	write("calldriver.go", callDriverSource)

	t.Logf("%d round trips", len(trips))
	goRun(t, dir, "vet", "./...")
	out := goRun(t, dir, "run", ".")
	if !strings.Contains(out, fmt.Sprintf("ok: %d round trips", len(trips))) || !strings.Contains(out, "calls ok") {
		t.Fatalf("driver output:\n%s", out)
	}
	t.Logf("driver: %s", strings.TrimSpace(out))
	deps := goRun(t, dir, "list", "-deps", ".")
	for _, line := range strings.Split(deps, "\n") {
		if strings.HasPrefix(line, "cuelang.org/go") || line == "testing" {
			t.Errorf("a program built from generated code links %s", line)
		}
	}
}

// driverSource is the program TestGeneratedCodeRuns runs.
const driverSource = `package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/validate"
)

type trip struct {
	label, pkg, digest, value string
	rt                        func([]byte) ([]byte, error)
}

func roundTrip[T any](b []byte) ([]byte, error) {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("unmarshal: %w", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshal: %w", err)
	}
	return out, nil
}

func main() {
	failed := 0
	fail := func(format string, args ...any) {
		failed++
		fmt.Printf("FAIL "+format+"\n", args...)
	}
	sets := map[string]*validate.Set{}
	for name, g := range graphs {
		s, err := validate.ForGraph(g)
		if err != nil {
			fmt.Println("FAIL", name, err)
			os.Exit(1)
		}
		sets[name] = s
	}
	for _, tr := range trips {
		v := sets[tr.pkg].Get(graph.Digest(tr.digest))
		in, err := validate.DecodeJSON([]byte(tr.value), nil)
		if err != nil {
			fail("%s: %s: %v", tr.label, tr.value, err)
			continue
		}
		if err := v.Validate(in); err != nil {
			fail("%s: the original %s is not valid: %v", tr.label, tr.value, err)
			continue
		}
		out, err := tr.rt([]byte(tr.value))
		if err != nil {
			fail("%s: %s: %v", tr.label, tr.value, err)
			continue
		}
		want, _ := graph.Canonical(json.RawMessage(tr.value))
		got, err := graph.Canonical(json.RawMessage(out))
		if err != nil || !bytes.Equal(want, got) {
			fail("%s: round trip changed the value:\n  sent %s\n  got  %s", tr.label, want, out)
			continue
		}
		back, _ := validate.DecodeJSON(out, nil)
		if err := v.Validate(back); err != nil {
			fail("%s: the re-encoded %s is not valid: %v", tr.label, out, err)
		}
	}
	failed += behaviour()
	failed += calls()
	if failed > 0 {
		fmt.Printf("%d failure(s)\n", failed)
		os.Exit(1)
	}
	fmt.Printf("ok: %d round trips\n", len(trips))
}
`

// behaviourSource pins what the round trips cannot show: what a Go value
// built by hand encodes to, and the errors the generated methods return.
const behaviourSource = `package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"gentest/mappingsapi"
	"gentest/schemasapi"
	"gentest/tasksapi"
)

func behaviour() int {
	failed := 0
	expect := func(what string, v any, want string) {
		b, err := json.Marshal(v)
		if err != nil || string(b) != want {
			failed++
			fmt.Printf("FAIL %s: got %s (%v), want %s\n", what, b, err, want)
		}
	}
	expectErr := func(what string, err error, substr string) {
		if err == nil || !strings.Contains(err.Error(), substr) {
			failed++
			fmt.Printf("FAIL %s: error %v, want one containing %q\n", what, err, substr)
		}
	}
	// A nil list in a required field is sent as [], not null (which the
	// schema refuses); in an optional one it is omitted.
	expect("nil required list", tasksapi.TasksListOutput{}, ` + "`" + `{"items":[]}` + "`" + `)
	expect("nil optional list", tasksapi.Task{ID: "t_1", Title: "x"}, ` + "`" + `{"done":false,"id":"t_1","title":"x"}` + "`" + `)
	// A required nullable list: nil is null.
	expect("nullable list", mappingsapi.MNullableInput{}, ` + "`" + `{"color":null,"req":null,"reqList":null}` + "`" + `)
	// Optional nullable: absent, null, value.
	expect("optional nullable absent", mappingsapi.MNullableInput{ReqList: []int64{}}, ` + "`" + `{"color":null,"req":null,"reqList":[]}` + "`" + `)
	expect("optional nullable null", mappingsapi.MNullableInput{ReqList: []int64{}, Opt: mappingsapi.NullValue[int64]()}, ` + "`" + `{"color":null,"opt":null,"req":null,"reqList":[]}` + "`" + `)
	expect("optional nullable value", mappingsapi.MNullableInput{ReqList: []int64{}, Opt: mappingsapi.NullableOf[int64](3)}, ` + "`" + `{"color":null,"opt":3,"req":null,"reqList":[]}` + "`" + `)
	// A discriminated union fills its discriminator in.
	expect("union fills kind", tasksapi.TasksNotifyInput{Sms: &tasksapi.TasksNotifyInputSms{Phone: "+1555"}}, ` + "`" + `{"kind":"sms","phone":"+1555"}` + "`" + `)
	_, err := json.Marshal(tasksapi.TasksNotifyInput{})
	expectErr("empty union", err, "no variant is set")
	_, err = json.Marshal(tasksapi.TasksNotifyInput{Email: &tasksapi.TasksNotifyInputEmail{Kind: "sms"}})
	expectErr("wrong discriminator", err, "want \"email\"")
	var u tasksapi.TasksNotifyInput
	expectErr("unknown discriminator", json.Unmarshal([]byte(` + "`" + `{"kind":"fax"}` + "`" + `), &u), "unknown kind \"fax\"")
	expectErr("missing discriminator", json.Unmarshal([]byte(` + "`" + `{"phone":"1"}` + "`" + `), &u), "\"kind\" is missing")
	if err := json.Unmarshal([]byte(` + "`" + `{"kind":"email","address":"a@b"}` + "`" + `), &u); err != nil || u.Kind() != "email" || u.Email == nil || u.Email.Address != "a@b" || u.Sms != nil {
		failed++
		fmt.Printf("FAIL decode union: %+v %v\n", u, err)
	}
	// A discriminator CUE defaults (kind: "email", not kind!:) may be
	// absent: the value is the variant it fits.
	var n mappingsapi.Notice
	if err := json.Unmarshal([]byte(` + "`" + `{"address":"a@b"}` + "`" + `), &n); err != nil || n.Kind() != "email" || n.Email == nil || n.Email.Address != "a@b" {
		failed++
		fmt.Printf("FAIL optional discriminator: %+v %v\n", n, err)
	}
	expectErr("fits no variant", json.Unmarshal([]byte(` + "`" + `{"fax":"1"}` + "`" + `), &n), "fits no variant")
	expect("optional discriminator filled in", mappingsapi.Notice{Sms: &mappingsapi.NoticeSms{Phone: "+1"}}, ` + "`" + `{"kind":"sms","phone":"+1"}` + "`" + `)
	// "" as a discriminator value: written as is, read back, and (when CUE
	// fills it in) inferred from the fields.
	expect("empty discriminator", mappingsapi.MUnionsInputBlank{X: &mappingsapi.MUnionsInputBlankX{X: 1}}, ` + "`" + `{"tag":"","x":1}` + "`" + `)
	_, err = json.Marshal(mappingsapi.MUnionsInputBlank{X: &mappingsapi.MUnionsInputBlankX{Tag: "full"}})
	expectErr("empty discriminator, wrong value", err, "want")
	var bl mappingsapi.MUnionsInputBlankOpt
	if err := json.Unmarshal([]byte(` + "`" + `{"x":3}` + "`" + `), &bl); err != nil || bl.X == nil || bl.X.X != 3 || bl.Some != nil {
		failed++
		fmt.Printf("FAIL empty discriminator inferred: %+v %v\n", bl, err)
	}
	if err := json.Unmarshal([]byte(` + "`" + `{"y":"z"}` + "`" + `), &bl); err != nil || bl.Some == nil || bl.X != nil {
		failed++
		fmt.Printf("FAIL other discriminator inferred: %+v %v\n", bl, err)
	}
	// A raw union decodes as each arm.
	var e mappingsapi.MUnionsInputEither
	_ = json.Unmarshal([]byte("42"), &e)
	if n, err := e.AsInt64(); err != nil || n != 42 {
		failed++
		fmt.Printf("FAIL AsInt64: %v %v\n", n, err)
	}
	if _, err := e.AsString(); err == nil {
		failed++
		fmt.Println("FAIL AsString accepted a number")
	}
	s, _ := mappingsapi.MUnionsInputEitherFromString("four")
	expect("union from string", s, ` + "`" + `"four"` + "`" + `)
	// Extra properties: kept, written after the declared ones, and never
	// allowed to repeat one.
	expect("extra", mappingsapi.MObjectsInputOpen{A: "a", Extra: map[string]json.RawMessage{"z": json.RawMessage("1")}}, ` + "`" + `{"a":"a","z":1}` + "`" + `)
	_, err = json.Marshal(mappingsapi.MObjectsInputOpen{Extra: map[string]json.RawMessage{"a": json.RawMessage("1")}})
	expectErr("extra repeats a property", err, "repeats a declared property")
	var o mappingsapi.MObjectsInputOpen
	if err := json.Unmarshal([]byte(` + "`" + `{"A":"folded","a":"exact"}` + "`" + `), &o); err != nil || o.A != "exact" || string(o.Extra["A"]) != ` + "`" + `"folded"` + "`" + ` {
		failed++
		fmt.Printf("FAIL exact property names: %+v %v\n", o, err)
	}
	// Tuples are arrays.
	expect("tuple", tasksapi.BoardTaskChangedArgs{Task: tasksapi.Task{ID: "t_1", Title: "x"}}, ` + "`" + `[{"done":false,"id":"t_1","title":"x"}]` + "`" + `)
	var tu schemasapi.TuplerestCommandInput
	expectErr("short tuple", json.Unmarshal([]byte("[]"), &tu), "want at least 1")
	_, err = json.Marshal(schemasapi.TuplerestCommandInput{Item0: "a", Rest: []bool{true}})
	expectErr("tuple gap", err, "position 1 is absent")
	// Enum constants carry their values.
	expect("enum", []mappingsapi.Color{mappingsapi.ColorRed, mappingsapi.ColorBlue}, ` + "`" + `["red","blue"]` + "`" + `)
	expect("int enum", mappingsapi.Level3, "3")
	// Integers beyond 2^53 survive.
	expect("int64", mappingsapi.MScalarsInput{I: 9007199254740993}.I, "9007199254740993")
	return failed
}
`

// callsSource writes, for each package, a typed implementation of every
// service and of the runtime tools: each method records the value it
// received and answers with the output of the example being called. The
// driver (callDriverSource) then calls every example through the real
// runner and checks both sides.
func callsSource(gs map[string]*graph.Graph, names []string) string {
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"context\"\n\n\t\"stitchkit.dev/stitchkit/pkg/mount\"\n")
	for _, n := range names {
		fmt.Fprintf(&b, "\t\"gentest/%sapi\"\n", n)
	}
	b.WriteString(")\n\nvar _ = mount.NewError\n\n")
	method := func(pkg, recv, name, id string, params, query, input, output string) {
		var args []string
		args = append(args, "ctx context.Context")
		var parts []string
		if params != "" {
			args = append(args, "params "+pkg+"."+params)
			parts = append(parts, fmt.Sprintf("record(%q, \"params\", params)", id))
		}
		if query != "" {
			args = append(args, "query "+pkg+"."+query)
			parts = append(parts, fmt.Sprintf("record(%q, \"query\", query)", id))
		}
		if input != "" {
			args = append(args, "in "+pkg+"."+input)
			parts = append(parts, fmt.Sprintf("record(%q, \"input\", in)", id))
		}
		res := "error"
		if output != "" {
			res = "(" + pkg + "." + output + ", error)"
		}
		fmt.Fprintf(&b, "func (%s) %s(%s) %s {\n", recv, name, strings.Join(args, ", "), res)
		for _, p := range parts {
			b.WriteString("\t" + p + "\n")
		}
		if output != "" {
			fmt.Fprintf(&b, "\tvar out %s.%s\n\tif err := answer(ctx, %q, &out); err != nil {\n\t\treturn out, err\n\t}\n\treturn out, nil\n}\n\n", pkg, output, id)
		} else {
			fmt.Fprintf(&b, "\treturn answer(ctx, %q, nil)\n}\n\n", id)
		}
	}
	b.WriteString("var implementations = map[string]func() (*mount.Implementation, error){\n")
	for _, n := range names {
		g := gs[n]
		pkg := n + "api"
		var fields []string
		for _, s := range g.Services {
			fields = append(fields, fmt.Sprintf("%s: %s%s{}", exportName(s.Name), pkg, exportName(s.Name)))
		}
		if len(g.RuntimeTools) > 0 {
			fields = append(fields, fmt.Sprintf("Runtime: %sRuntime{}", pkg))
		}
		fmt.Fprintf(&b, "\t%q: func() (*mount.Implementation, error) { return %s.Register(%s.Services{%s}) },\n", pkg, pkg, pkg, strings.Join(fields, ", "))
	}
	b.WriteString("}\n\n")
	for _, n := range names {
		g := gs[n]
		pkg := n + "api"
		for _, s := range g.Services {
			recv := pkg + exportName(s.Name)
			fmt.Fprintf(&b, "type %s struct{ %s.Unimplemented%sService }\n\n", recv, pkg, exportName(s.Name))
			for _, op := range s.Operations {
				base := exportName(op.Service) + exportName(op.Action)
				role := func(d graph.Digest, r string) string {
					if d == "" {
						return ""
					}
					return base + r
				}
				method(pkg, recv, exportName(op.Action), pkg+"/"+op.ID(), role(op.Params, "Params"), role(op.Query, "Query"), role(op.Input, "Input"), role(op.Output, "Output"))
			}
		}
		if len(g.RuntimeTools) > 0 {
			recv := pkg + "Runtime"
			fmt.Fprintf(&b, "type %s struct{ %s.UnimplementedRuntimeTools }\n\n", recv, pkg)
			for _, rt := range g.RuntimeTools {
				base := exportName(rt.Name)
				out := ""
				if rt.Output != "" {
					out = base + "Output"
				}
				method(pkg, recv, base, pkg+"/"+rt.Identity.Service+"."+rt.Identity.Action, "", "", base+"Input", out)
			}
		}
	}
	return b.String()
}

// callDriverSource calls every operation example through mount.Runner:
// params and query as decoded values, the input as request bytes, exactly
// as a transport hands them over.
const callDriverSource = `package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// The call in progress: what the method must receive and answer.
type expectation struct {
	parts    map[string]json.RawMessage
	received map[string][]byte
	fail     string // an error code the method answers instead
}

type ctxKey struct{}

var current *expectation

func record(id, part string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte("marshal error: " + err.Error())
	}
	current.received[part] = b
}

func answer(ctx context.Context, id string, out any) error {
	if current.fail != "" {
		return mount.NewError(mount.Code(current.fail), "")
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(current.parts["output"], out)
}

func calls() int {
	failed := 0
	fail := func(format string, args ...any) {
		failed++
		fmt.Printf("FAIL "+format+"\n", args...)
	}
	names := make([]string, 0, len(implementations))
	for n := range implementations {
		names = append(names, n)
	}
	sort.Strings(names)
	n := 0
	for _, pkg := range names {
		impl, err := implementations[pkg]()
		if err != nil {
			fail("%s: Register: %v", pkg, err)
			continue
		}
		if un := impl.Unbound(); len(un) > 0 {
			fail("%s: Register left %d identities unbound", pkg, len(un))
		}
		r, err := mount.New(impl, &mount.Options{RequireAll: true})
		if err != nil {
			fail("%s: %v", pkg, err)
			continue
		}
		g := graphs[pkg]
		type target struct {
			id       string
			examples []json.RawMessage
			tool     bool
		}
		var targets []target
		for _, op := range g.Operations() {
			targets = append(targets, target{op.ID(), op.Examples, false})
		}
		for _, rt := range g.RuntimeTools {
			targets = append(targets, target{rt.Identity.Service + "." + rt.Identity.Action, rt.Examples, true})
		}
		for _, tg := range targets {
			svc, action, _ := cut(tg.id)
			ep := r.Endpoint(svc, action)
			for i, raw := range tg.examples {
				var parts map[string]json.RawMessage
				_ = json.Unmarshal(raw, &parts)
				current = &expectation{parts: parts, received: map[string][]byte{}}
				var res mount.Result
				if tg.tool {
					res = ep.CallTool(context.Background(), mount.SourceInternal, parts["input"], nil)
				} else {
					req := &mount.Request{Source: mount.SourceInternal}
					if p, ok := parts["params"]; ok {
						req.Params.Values = decodeObject(p)
					}
					if q, ok := parts["query"]; ok {
						req.Query.Values = decodeObject(q)
					}
					if in, ok := parts["input"]; ok {
						req.Body = func() ([]byte, error) { return in, nil }
					}
					res = ep.Call(context.Background(), req)
				}
				n++
				label := fmt.Sprintf("%s %s example %d", pkg, tg.id, i)
				if res.Err != nil {
					fail("%s: %v", label, res.Err)
					continue
				}
				for _, part := range []string{"params", "query", "input"} {
					want, ok := parts[part]
					if !ok {
						continue
					}
					if !sameJSON(want, current.received[part]) {
						fail("%s: the method received %s %s, want %s", label, part, current.received[part], want)
					}
				}
				if want, ok := parts["output"]; ok && !sameJSON(want, res.Output) {
					fail("%s: output %s, want %s", label, res.Output, want)
				}
			}
		}
	}
	// Errors: a declared code passes with its status, an undeclared one
	// becomes INTERNAL_SERVER_ERROR; a value that does not fit the Go type
	// is VALIDATION_ERROR.
	impl, _ := implementations["tasksapi"]()
	r, _ := mount.New(impl, nil)
	get := r.Endpoint("tasks", "get")
	for _, c := range []struct{ code, want string; status int }{
		{"TASK_NOT_FOUND", "TASK_NOT_FOUND", 404},
		{"FILE_NOT_FOUND", "INTERNAL_SERVER_ERROR", 500},
	} {
		current = &expectation{received: map[string][]byte{}, fail: c.code}
		res := get.CallTool(context.Background(), mount.SourceInternal, json.RawMessage(` + "`" + `{"id":"t_9"}` + "`" + `), nil)
		if res.Err == nil || string(res.Err.Code) != c.want || res.Err.Status != c.status {
			fail("tasks.get answering %s: %+v", c.code, res.Err)
		}
	}
	impl, _ = implementations["mappingsapi"]()
	r, _ = mount.New(impl, nil)
	current = &expectation{received: map[string][]byte{}, parts: map[string]json.RawMessage{"output": json.RawMessage(` + "`" + `{"ok":true}` + "`" + `)}}
	res := r.Endpoint("m", "scalars").Call(context.Background(), &mount.Request{Body: func() ([]byte, error) {
		return []byte(` + "`" + `{"s":"s","i":9223372036854775808,"n":1,"f":1.5,"b":true,"count":1,"bounded":0,"lit":"fixed","short":"a","when":"2024-01-02T03:04:05Z","kebab-case":"k","123start":true,"-":"d","type":"t","Upper":"U","upper":"u","userId":"u"}` + "`" + `), nil
	}})
	if res.Err == nil || res.Err.Code != "VALIDATION_ERROR" || !strings.Contains(res.Err.Message, "does not fit") {
		fail("an integer beyond int64: %+v", res.Err)
	}
	// Defaults are applied before the typed method sees the input.
	impl, _ = implementations["schemasapi"]()
	r, _ = mount.New(impl, nil)
	current = &expectation{received: map[string][]byte{}}
	res = r.Endpoint("corpus", "defaults").CallTool(context.Background(), mount.SourceInternal, json.RawMessage(` + "`" + `{"name":"n"}` + "`" + `), nil)
	if want := ` + "`" + `{"limit":20,"mode":"safe","name":"n","tags":[]}` + "`" + `; res.Err != nil || !sameJSON([]byte(want), current.received["input"]) {
		fail("defaults: %v: the method received %s, want %s", res.Err, current.received["input"], want)
	}
	if failed == 0 {
		fmt.Printf("calls ok: %d example calls through mount.Runner\n", n)
	}
	return failed
}

func cut(id string) (string, string, bool) {
	for i := len(id) - 1; i >= 0; i-- {
		if id[i] == '.' {
			return id[:i], id[i+1:], true
		}
	}
	return id, "", false
}

func decodeObject(raw json.RawMessage) map[string]any {
	v, err := validate.DecodeJSON(raw, nil)
	if err != nil {
		panic(err)
	}
	m, _ := v.(map[string]any)
	return m
}

func sameJSON(a, b []byte) bool {
	x, err1 := graph.Canonical(json.RawMessage(a))
	y, err2 := graph.Canonical(json.RawMessage(b))
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
`
