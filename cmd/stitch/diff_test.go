package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/check"
)

const diffContract = `package notes

import "stitchkit.dev/stitchkit/schema"

schema.#Contract & {
	name:    "notes"
	version: "1.0.0"
	services: notes: operations: create: {
		method: "POST"
		path:   "/"
		desc:   "Create a note"
		#input: {text: string%s}
		#output: {id: string}
	}
}
`

func writeContract(t *testing.T, dir, extra string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(diffContract, "%s", extra, 1)
	if err := os.WriteFile(filepath.Join(dir, "notes.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func diffRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestDiffFolders(t *testing.T) {
	dir := t.TempDir()
	oldDir, newDir, sameDir := filepath.Join(dir, "old"), filepath.Join(dir, "new"), filepath.Join(dir, "same")
	writeContract(t, oldDir, "")
	writeContract(t, newDir, ", lang: string")
	writeContract(t, sameDir, "")

	code, out, errOut := diffRun(t, "diff", oldDir, sameDir)
	if code != exitOK || !strings.Contains(out, "no breaking changes") {
		t.Fatalf("identical: exit %d\n%s%s", code, out, errOut)
	}

	code, out, _ = diffRun(t, "diff", oldDir, newDir, "--format", "githubactions")
	if code != exitBreaking {
		t.Fatalf("breaking: exit %d, want %d\n%s", code, exitBreaking, out)
	}
	wantFile := filepath.ToSlash(filepath.Join(newDir, "notes.cue"))
	if !strings.Contains(out, "::error file="+strings.ReplaceAll(wantFile, ":", "%3A")+",line=12,col=26,title=request-required-property-added::") {
		t.Errorf("githubactions output lacks the positioned error:\n%s", out)
	}

	code, out, _ = diffRun(t, "diff", oldDir, newDir, "--format", "json")
	var rep struct {
		Summary  struct{ Breaking int }
		Findings []struct{ Fingerprint string }
	}
	if code != exitBreaking || json.Unmarshal([]byte(out), &rep) != nil || rep.Summary.Breaking != 1 {
		t.Fatalf("json: exit %d\n%s", code, out)
	}

	// Accept the change in stitch-review.yaml next to the new contract.
	sup := "suppressions:\n  - fingerprint: " + rep.Findings[0].Fingerprint + "\n    reason: clients send lang since v0.9\n"
	if err := os.WriteFile(filepath.Join(newDir, "stitch-review.yaml"), []byte(sup), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = diffRun(t, "diff", oldDir, newDir, "--format", "markdown")
	if code != exitOK || !strings.Contains(out, "Accepted (suppressed) (1)") {
		t.Fatalf("suppressed: exit %d\n%s", code, out)
	}

	// An explicit, broken suppressions file is a failure, not a verdict.
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("suppressions:\n  - fingerprint: 0123456789abcdef\n    reasn: typo\n"), 0o644)
	code, out, errOut = diffRun(t, "diff", oldDir, newDir, "--suppressions", bad)
	if code != exitFailure || out != "" || !strings.Contains(errOut, "line 3: field reasn not found") {
		t.Fatalf("bad suppressions: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
}

func TestDiffGraphJSON(t *testing.T) {
	dir := t.TempDir()
	writeContract(t, filepath.Join(dir, "c"), "")
	g, err := check.Compile(context.Background(), filepath.Join(dir, "c"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.Encode()
	if err != nil {
		t.Fatal(err)
	}
	gj := filepath.Join(dir, "graph.json")
	os.WriteFile(gj, b, 0o644)
	writeContract(t, filepath.Join(dir, "n"), ", lang?: string")
	code, out, errOut := diffRun(t, "diff", gj, filepath.Join(dir, "n"))
	if code != exitOK || !strings.Contains(out, "request-optional-property-added") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestDiffFailuresNeverSayNoBreaking(t *testing.T) {
	dir := t.TempDir()
	writeContract(t, filepath.Join(dir, "ok"), "")
	broken := filepath.Join(dir, "broken")
	os.MkdirAll(broken, 0o755)
	os.WriteFile(filepath.Join(broken, "notes.cue"), []byte("package notes\nname: 1\n"), 0o644)
	for _, args := range [][]string{
		{"diff", filepath.Join(dir, "ok"), broken},
		{"diff", filepath.Join(dir, "missing"), filepath.Join(dir, "ok")},
		{"diff", "git:no-such-ref-xyz:.", filepath.Join(dir, "ok")},
	} {
		code, out, errOut := diffRun(t, args...)
		if code != exitFailure {
			t.Errorf("%v: exit %d, want %d", args, code, exitFailure)
		}
		if strings.Contains(out+errOut, "no breaking changes") || out != "" {
			t.Errorf("%v: a failed comparison printed a report:\n%s", args, out)
		}
	}
	if code, _, _ := diffRun(t, "diff", filepath.Join(dir, "ok"), filepath.Join(dir, "ok"), "--format", "yaml"); code != exitUsage {
		t.Errorf("unknown format: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := diffRun(t, "diff", filepath.Join(dir, "ok")); code != exitUsage {
		t.Errorf("one argument: exit %d, want %d", code, exitUsage)
	}
}

func TestDiffPrintSchema(t *testing.T) {
	code, out, _ := diffRun(t, "diff", "--print-schema")
	var v map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || v["$schema"] == nil {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestDiffGitRef reads the old side from a commit with git:REF:DIR and
// checks the work tree and index are left exactly as they were.
func TestDiffGitRef(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: git:REF:DIR reads the old side with it (README, Set-up)")
	}
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	writeContract(t, filepath.Join(repo, "contracts"), "")
	git("add", ".")
	git("commit", "-qm", "v1")
	writeContract(t, filepath.Join(repo, "contracts"), ", lang: string")
	before := git("status", "--porcelain")
	t.Chdir(repo)

	code, out, errOut := diffRun(t, "diff", "git:HEAD:contracts", "contracts", "--format", "githubactions")
	if code != exitBreaking {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "::error file=contracts/notes.cue,line=12,col=26,title=request-required-property-added::") {
		t.Errorf("annotation does not name the repository file:\n%s", out)
	}
	if after := git("status", "--porcelain"); after != before {
		t.Errorf("work tree changed: before %q after %q", before, after)
	}
	code, out, errOut = diffRun(t, "diff", "git:HEAD:contracts", "git:HEAD:contracts")
	if code != exitOK || !strings.Contains(out, "no breaking changes") {
		t.Fatalf("same ref: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = diffRun(t, "diff", "git:HEAD:nothing-here", "contracts")
	if code != exitFailure || !strings.Contains(errOut, "no .cue file") {
		t.Fatalf("missing dir: exit %d\n%s", code, errOut)
	}
}

// TestDiffGitRefFromSubdirectory runs git:REF:DIR from inside the contract
// folder: DIR is relative to the current directory, as in git's REF:./path.
func TestDiffGitRefFromSubdirectory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: git:REF:DIR reads the old side with it (README, Set-up)")
	}
	repo := t.TempDir()
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "XDG_CONFIG_HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": filepath.Join(home, "gitconfig"),
		"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"} {
		t.Setenv(k, v)
	}
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(repo, "init", "-q")
	contracts := filepath.Join(repo, "contracts")
	writeContract(t, contracts, "")
	git(repo, "add", ".")
	git(repo, "commit", "-qm", "v1")
	writeContract(t, contracts, ", lang: string")

	t.Chdir(contracts)
	code, out, errOut := diffRun(t, "diff", "git:HEAD:.", ".", "--format", "githubactions")
	if code != exitBreaking {
		t.Fatalf("git:HEAD:. from contracts/: exit %d\n%s%s", code, out, errOut)
	}
	// GitHub resolves annotation paths against the repository root.
	if !strings.Contains(out, "::error file=contracts/notes.cue,line=12,col=26,title=request-required-property-added::") {
		t.Errorf("annotation does not name the file relative to the repository root:\n%s", out)
	}
	// The text format keeps paths relative to the current directory.
	if _, out, _ := diffRun(t, "diff", "git:HEAD:.", "."); !strings.Contains(out, "  notes.cue:12:26\n") {
		t.Errorf("text report does not name the file relative to the current directory:\n%s", out)
	}
	for _, old := range []string{"git:HEAD:./", "git:HEAD:../contracts"} {
		if code, out, errOut := diffRun(t, "diff", old, "."); code != exitBreaking {
			t.Errorf("%s: exit %d\n%s%s", old, code, out, errOut)
		}
	}
	// Deeper still: DIR climbs back up.
	sub := filepath.Join(contracts, "sub")
	os.MkdirAll(sub, 0o755)
	t.Chdir(sub)
	if code, out, errOut := diffRun(t, "diff", "git:HEAD:..", ".."); code != exitBreaking {
		t.Errorf("git:HEAD:.. from contracts/sub: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := diffRun(t, "diff", "git:HEAD:../../..", ".."); code != exitFailure || !strings.Contains(errOut, "outside the git repository") {
		t.Errorf("DIR above the repository: exit %d\n%s", code, errOut)
	}
}

// A revision that starts with "-" must never reach git as an option.
func TestDiffGitRefOptionRefused(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"diff", "git:--output=/tmp/stitch-pwned:.", "../../examples/minimal"}, &stdout, &stderr)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitFailure, stderr.String())
	}
	if !strings.Contains(stderr.String(), "must not be empty or start with '-'") {
		t.Errorf("stderr = %q", stderr.String())
	}
	if _, err := os.Stat("/tmp/stitch-pwned"); err == nil {
		t.Error("git received the ref as an option")
	}
	if stdout.Len() != 0 {
		t.Errorf("a failed comparison printed %q", stdout.String())
	}
}
