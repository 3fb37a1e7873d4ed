package gen

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/check"
)

// cliContract has an operation exposed to the CLI with an application
// error code, and a CLI-only command with a default and a bounded input.
const cliContract = `package clinic

import "stitchkit.dev/stitchkit/schema"

#Invoice: {
	id:     string
	status: "open" | "paid"
}

schema.#Contract & {
	name:    "clinic"
	version: "1.0.0"
	errors: INVOICE_NOT_FOUND: {status: 404, message: "No such invoice"}
	services: invoices: {
		scope: "public"
		operations: get: {
			method: "GET", path: "/{id}", desc: "Read an invoice"
			expose: ["HTTP", "CLI"]
			#params: {id: string}
			#output: #Invoice
			errors: ["INVOICE_NOT_FOUND"]
		}
	}
	cliCommands: doctor: {
		desc: "Check the configuration"
		#input: {level: *3 | int & >=1 & <=5}
		#output: {ok: bool, level: int}
	}
}
`

// cliImpl is the hand-written file of the generated main package that
// runs the commands in process.
const cliImpl = `package main

import (
	"context"
	"encoding/json"
	"fmt"

	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/mount/cli"

	"gentest/clinicapi"
)

type invoices struct{ clinicapi.UnimplementedInvoicesService }

func (invoices) Get(ctx context.Context, p clinicapi.InvoicesGetParams) (clinicapi.InvoicesGetOutput, error) {
	if p.ID != "in_1" {
		return clinicapi.InvoicesGetOutput{}, mount.NewError(clinicapi.CodeInvoiceNotFound, "")
	}
	return clinicapi.InvoicesGetOutput{ID: p.ID, Status: clinicapi.InvoicesGetOutputStatusPaid}, nil
}

func init() {
	implementation = func() (clinicapi.Services, map[string]cli.CommandFunc, error) {
		doctor := func(ctx context.Context, in map[string]any) (json.RawMessage, error) {
			return json.RawMessage(fmt.Sprintf("{\"ok\":true,\"level\":%v}", in["level"])), nil
		}
		return clinicapi.Services{Invoices: invoices{}}, map[string]cli.CommandFunc{"doctor": doctor}, nil
	}
}
`

// TestCLIMain builds the command `stitch gen --cli` writes, with a file
// that runs it in process, and runs it as a user would: the CLI-only
// command's handler receives its default, --help shows the default and
// bounds, and an application code (404) exits 4.
func TestCLIMain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a command")
	}
	g, err := check.CompileFiles(context.Background(), map[string][]byte{"clinic.cue": []byte(cliContract)})
	if err != nil {
		t.Fatal(err)
	}
	dir := tempModule(t)
	files, err := Generate(g, &Options{Package: "clinicapi"})
	if err != nil {
		t.Fatal(err)
	}
	main, err := CLIMain(g, "gentest/clinicapi", "clinicapi")
	if err != nil {
		t.Fatal(err)
	}
	write := func(sub string, fs ...File) {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if err := os.WriteFile(filepath.Join(dir, sub, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("clinicapi", files...)
	write("cmd/clinic", main, File{Name: "impl.go", Data: []byte(cliImpl)})
	bin := filepath.Join(dir, "clinic")
	goRun(t, dir, "build", "-o", bin, "./cmd/clinic")
	goRun(t, dir, "vet", "./...")

	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr, cmd.Stdin = &stdout, &stderr, strings.NewReader("")
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0, stdout.String(), stderr.String()
		case errors.As(err, &ee):
			return ee.ExitCode(), stdout.String(), stderr.String()
		}
		t.Fatalf("%v: %v", args, err)
		return 0, "", ""
	}
	if code, out, errOut := run("doctor", "--json"); code != 0 || strings.TrimSpace(out) != `{"ok":true,"level":3}` {
		t.Errorf("doctor: exit %d, stdout %q, stderr %q; want the default level 3 to reach the handler", code, out, errOut)
	}
	if code, out, errOut := run("doctor", "--level", "5", "--json"); code != 0 || strings.TrimSpace(out) != `{"ok":true,"level":5}` {
		t.Errorf("doctor --level 5: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := run("doctor", "--level", "9"); code != 1 || !strings.Contains(errOut, "VALIDATION_ERROR") {
		t.Errorf("doctor --level 9: exit %d, stderr %q; want 1, VALIDATION_ERROR", code, errOut)
	}
	if code, out, _ := run("doctor", "--help"); code != 0 || !strings.Contains(out, "[default 3; >=1 <=5]") {
		t.Errorf("doctor --help: exit %d; want the default and bounds:\n%s", code, out)
	}
	if code, out, errOut := run("get_invoice", "--id", "in_1", "--json"); code != 0 || strings.TrimSpace(out) != `{"id":"in_1","status":"paid"}` {
		t.Errorf("get_invoice: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := run("get_invoice", "--id", "in_2"); code != 4 || !strings.Contains(errOut, "INVOICE_NOT_FOUND") {
		t.Errorf("get_invoice of a missing invoice: exit %d, stderr %q; want 4 (INVOICE_NOT_FOUND is a 404)", code, errOut)
	}
}
