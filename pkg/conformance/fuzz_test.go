package conformance

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// snapshotFiles are the committed manifest snapshots of this package.
var snapshotFiles = []string{
	filepath.Join("testdata", "items.manifest.json"),
	filepath.Join("testdata", "examples", "minimal.manifest.json"),
	filepath.Join("testdata", "examples", "tasks.manifest.json"),
}

func decodeFile(t testing.TB, path string) *Manifest {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := DecodeManifest(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// checkRoundTrip fails t unless an accepted manifest re-encodes to bytes
// that decode and re-encode to the same bytes.
func checkRoundTrip(t testing.TB, data []byte, m *Manifest) {
	t.Helper()
	first, err := m.Encode()
	if err != nil {
		t.Fatalf("accepted manifest does not encode: %v\ninput: %q", err, data)
	}
	back, err := DecodeManifest(first)
	if err != nil {
		t.Fatalf("re-encoded manifest is refused: %v\ninput: %q\nencoded:\n%s", err, data, first)
	}
	second, err := back.Encode()
	if err != nil {
		t.Fatalf("decoded manifest does not encode: %v\nencoded:\n%s", err, first)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("manifest bytes changed in a round trip:\ninput: %q\nfirst:\n%s\nsecond:\n%s", data, first, second)
	}
	if diff, equal := CompareManifest(m, back); !equal {
		t.Fatalf("CompareManifest reports a difference after a round trip:\n%s", diff)
	}
}

// TestSnapshotFilesRoundTrip: every committed snapshot is exactly what
// encoding its decoded manifest writes.
func TestSnapshotFilesRoundTrip(t *testing.T) {
	for _, p := range snapshotFiles {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m := decodeFile(t, p)
		checkRoundTrip(t, data, m)
		if enc, _ := m.Encode(); !bytes.Equal(enc, data) {
			t.Errorf("%s is not the encoding of its own manifest", p)
		}
	}
}

// FuzzDecodeManifest: DecodeManifest never panics on a snapshot file, and
// a manifest it accepts re-encodes to bytes that decode and re-encode to
// the same bytes.
func FuzzDecodeManifest(f *testing.F) {
	// Seeds: the committed snapshots cut to one row per list (the fuzzer
	// minimises every new input it keeps, at a cost that grows with the
	// cube of its length, so seeds stay under 1 KiB;
	// TestSnapshotFilesRoundTrip checks the whole files).
	for _, p := range snapshotFiles {
		m := decodeFile(f, p)
		m.Operations = m.Operations[:min(1, len(m.Operations))]
		m.ToolSurfaces = m.ToolSurfaces[:min(1, len(m.ToolSurfaces))]
		for i := range m.ToolSurfaces {
			m.ToolSurfaces[i].Tools = m.ToolSurfaces[i].Tools[:min(1, len(m.ToolSurfaces[i].Tools))]
		}
		m.RealtimeContracts = m.RealtimeContracts[:min(1, len(m.RealtimeContracts))]
		m.Realtime = m.Realtime[:min(1, len(m.Realtime))]
		m.CliOnly = m.CliOnly[:min(1, len(m.CliOnly))]
		m.Extensions = m.Extensions[:min(1, len(m.Extensions))]
		compact, err := m.Canonical()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(compact)
	}
	for _, s := range []string{
		`{"manifestVersion":2,"digestVersion":1,"operations":[],"toolSurfaces":[],"realtimeContracts":[],"realtime":[],"cliOnly":[],"extensions":[]}`,
		`{"manifestVersion":2,"digestVersion":1,"operations":null,"toolSurfaces":null,"realtimeContracts":null,"realtime":null,"cliOnly":null,"extensions":null}`,
		`{"manifestVersion":2,"digestVersion":1,"operations":[{"kind":"contract","service":"tasks","action":"get","method":"GET","scope":"public","description":"Get a task","schemas":{"params":"3797626bd17e346d","query":null,"input":null,"output":"00404e686415370f"},"http":[{"method":"GET","path":"/tasks/{id}"}]}],"toolSurfaces":[{"transport":"MCP","surface":"member","tools":[{"kind":"contract","service":"tasks","action":"get","name":"get_task","input":"3797626bd17e346d"}]},{"transport":"AGENT","surface":null,"tools":[]}],"realtimeContracts":["board"],"realtime":[{"contract":"board","direction":"serverToClient","event":"moved","args":{"input":"aa","output":"aa"},"acknowledgement":null}],"cliOnly":[{"name":"doctor","description":"Check","input":"44136fa355b3678a","output":null}],"extensions":[{"name":"healthz","transport":"HTTP"}]}`,
		`{"manifestVersion":1}`,
		`{"manifestVersion":2,"digestVersion":0}`,
		`{"manifestVersion":2,"digestVersion":1,"bogus":true}`,
		`{"manifestVersion":2,"digestVersion":1} {}`,
		`{}`,
		`null`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeManifest(data)
		if err != nil {
			return
		}
		checkRoundTrip(t, data, m)
	})
}
