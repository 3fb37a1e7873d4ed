package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exportContract has an HTTP route with a trailing wildcard and a realtime
// contract.
const exportContract = `package tasks

import "stitchkit.dev/stitchkit/schema"

#Task: {id: string, done: bool}

schema.#Contract & {
	name:    "tasks"
	version: "1.0.0"
	services: tasks: operations: {
		get: {method: "GET", path: "/{id}", desc: "Get one task", #output: #Task}
		files: {method: "GET", path: "/{id}/files/{rest...}", desc: "Read a task file", #output: {body: string}}
	}
	realtime: board: serverToClient: taskChanged: {#args: [#Task]}
}
`

func exportContractDir(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tasks.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runStitch(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestExportCommands(t *testing.T) {
	dir := exportContractDir(t, exportContract)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"openapi", dir, "--http-prefix", "/api"}, `"/api/tasks/{id}/files/{rest...}"`},
		{[]string{"openapi", dir, "--server", "https://api.example.org", "--server", "http://127.0.0.1:8080"}, `"url": "http://127.0.0.1:8080"`},
		{[]string{"openapi", dir, "--license", "Apache 2.0", "--license-id", "Apache-2.0"}, `"identifier": "Apache-2.0"`},
		{[]string{"asyncapi", dir}, `"address": "/realtime/board"`},
		{[]string{"asyncapi", dir, "--realtime-prefix", "/ws"}, `"address": "/ws/board"`},
	} {
		code, out, errOut := runStitch(tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		if !strings.Contains(out, tc.want) || !strings.HasSuffix(out, "}\n") {
			t.Errorf("%v: output lacks %s", tc.args, tc.want)
		}
		// -o writes the same bytes to a file and nothing to stdout.
		file := filepath.Join(t.TempDir(), "doc.json")
		code, out2, errOut := runStitch(append(tc.args, "-o", file)...)
		if code != 0 || out2 != "" {
			t.Fatalf("%v -o: exit %d, stdout %q, stderr %s", tc.args, code, out2, errOut)
		}
		if b, err := os.ReadFile(file); err != nil || string(b) != out {
			t.Errorf("%v -o: file differs from stdout (err %v)", tc.args, err)
		}
	}
}

func TestExportCommandFailures(t *testing.T) {
	bad := exportContractDir(t, strings.Replace(exportContract, `method: "GET", path: "/{id}"`, `method: "FETCH", path: "/{id}"`, 1))
	for _, cmd := range []string{"openapi", "asyncapi"} {
		code, out, errOut := runStitch(cmd, bad)
		if code != exitFailure || out != "" {
			t.Errorf("%s on a broken contract: exit %d, stdout %q", cmd, code, out)
		}
		if !strings.Contains(errOut, "tasks.cue:") {
			t.Errorf("%s: diagnostics lack a position: %s", cmd, errOut)
		}
		if code, _, _ := runStitch(cmd, bad, bad); code != exitUsage {
			t.Errorf("%s with two DIRs: exit %d, want %d", cmd, code, exitUsage)
		}
		if code, _, _ := runStitch(cmd, bad, "--nope"); code != exitUsage {
			t.Errorf("%s with an unknown flag: exit %d, want %d", cmd, code, exitUsage)
		}
		if code, _, errOut := runStitch(cmd, exportContractDir(t, exportContract), "-o", filepath.Join(t.TempDir(), "missing", "x.json")); code != exitFailure || !strings.Contains(errOut, "write") {
			t.Errorf("%s with an unwritable -o: exit %d: %s", cmd, code, errOut)
		}
	}
}

// TestPrefixFlagNames: --http-prefix means the HTTP mount prefix on every
// command that projects routes; the old openapi --prefix (and asyncapi's,
// now --realtime-prefix) still work, with a notice on stderr that never
// reaches the document.
func TestPrefixFlagNames(t *testing.T) {
	dir := exportContractDir(t, exportContract)
	for _, c := range []struct{ old, new []string }{
		{[]string{"openapi", dir, "--prefix", "/api"}, []string{"openapi", dir, "--http-prefix", "/api"}},
		{[]string{"asyncapi", dir, "--prefix", "/ws"}, []string{"asyncapi", dir, "--realtime-prefix", "/ws"}},
	} {
		code, oldOut, oldErr := runStitch(c.old...)
		if code != 0 || !strings.Contains(oldErr, "deprecated") {
			t.Errorf("%v: exit %d, stderr %q", c.old, code, oldErr)
		}
		_, newOut, newErr := runStitch(c.new...)
		if oldOut != newOut || newErr != "" {
			t.Errorf("%v and %v print different documents (stderr %q)", c.old, c.new, newErr)
		}
	}
	m1, m2 := t.TempDir()+"/m1.json", t.TempDir()+"/m2.json"
	if code, _, errOut := runStitch("manifest", dir, "--http-prefix", "/api", "-o", m1); code != 0 {
		t.Fatalf("manifest: %s", errOut)
	}
	if code, _, errOut := runStitch("openapi", dir, "--http-prefix", "/api", "-o", m2); code != 0 {
		t.Fatalf("openapi: %s", errOut)
	}
	mb, _ := os.ReadFile(m1)
	ob, _ := os.ReadFile(m2)
	if !strings.Contains(string(mb), `"/api/tasks/{id}"`) || !strings.Contains(string(ob), `"/api/tasks/{id}"`) {
		t.Error("--http-prefix does not move the routes of both the manifest and the document")
	}
	if code, _, errOut := runStitch("openapi", dir, "--license-id", "MIT"); code != exitUsage || !strings.Contains(errOut, "--license NAME") {
		t.Errorf("--license-id without --license: exit %d, %s", code, errOut)
	}
}
