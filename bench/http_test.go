package bench

// HTTP rows: one POST with a path parameter, a JSON body and a JSON output,
// served three ways on the same machine in one process:
//
//   - ours: the stitchkit HTTP mount (pkg/mount/http over the runner);
//   - nethttp: a hand-written net/http handler giving the same guarantees
//     with the same validator — body cap, content-type check, strict JSON
//     decoding, params/input validation, typed decode, encode, output
//     validation — i.e. what a careful author writes without a framework;
//   - huma: huma v2 on net/http (humago) with the same constraints as Go
//     struct tags; huma validates requests, not responses.
//
// bench/run.sh prints http-vs-nethttp (goal 1.15: at most 15% over the
// hand-written handler) and http-vs-huma (goal 0.9: at least 10% faster
// than huma), plus allocations per request of all three.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	httpmount "stitchkit.dev/stitchkit/pkg/mount/http"
	"stitchkit.dev/stitchkit/pkg/validate"
)

const (
	benchParams = `{"type":"object","properties":{"id":{"type":"string","pattern":"^i_[a-z0-9]+$"}},"required":["id"],"additionalProperties":false}`
	benchInput  = `{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":100},"count":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"type":"string"},"maxItems":10}},"required":["name","count"],"additionalProperties":false}`
	benchOutput = `{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"},"count":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"type":"string"}}},"required":["id","name","count"],"additionalProperties":false}`
	benchBody   = `{"name":"Write the benchmark","count":3,"tags":["bench","http"]}`
	benchPath   = "/items/i_42"
)

// itemIn and itemOut are the typed values every side works with.
type itemIn struct {
	Name  string   `json:"name"`
	Count int      `json:"count"`
	Tags  []string `json:"tags,omitempty"`
}

type itemOut struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Count int      `json:"count"`
	Tags  []string `json:"tags,omitempty"`
}

// update is the application logic all three sides run.
func update(id string, in itemIn) itemOut {
	return itemOut{ID: id, Name: in.Name, Count: in.Count + 1, Tags: in.Tags}
}

func benchSchema(tb testing.TB, g *graph.Graph, s string) graph.Digest {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		tb.Fatal(err)
	}
	d, err := g.AddSchema(v)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// oursHandler is the stitchkit mount of items.update with a typed handler
// wrapped as a generated binding would wrap it.
func oursHandler(tb testing.TB) http.Handler {
	g := &graph.Graph{GraphVersion: graph.GraphVersion, DigestVersion: graph.DigestVersion, Name: "items", Version: "1.0.0",
		Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}}}
	g.Services = []graph.Service{{Name: "items", Prefix: "/items", Scope: "public", Operations: []graph.Operation{{
		Service: "items", Action: "update", Method: "POST", Path: "/{id}", Desc: "Update an item", Scope: "public",
		Expose: []graph.Transport{graph.HTTP},
		Params: benchSchema(tb, g, benchParams), Input: benchSchema(tb, g, benchInput), Output: benchSchema(tb, g, benchOutput),
	}}}}
	impl := mount.NewImplementation(g)
	err := impl.Handle("items", "update", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		var in itemIn
		if err := c.DecodeInput(&in); err != nil {
			return nil, err
		}
		return json.Marshal(update(c.Params["id"].(string), in))
	})
	if err != nil {
		tb.Fatal(err)
	}
	runner, err := mount.New(impl, &mount.Options{RequireAll: true})
	if err != nil {
		tb.Fatal(err)
	}
	h, err := httpmount.New(runner, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// netHTTPHandler is the hand-written peer: the same checks with the same
// validator, no framework.
func netHTTPHandler(tb testing.TB) http.Handler {
	compile := func(s string) *validate.Validator {
		v, err := validate.Compile([]byte(s))
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
	params, input, output := compile(benchParams), compile(benchInput), compile(benchOutput)
	fail := func(w http.ResponseWriter, status int, code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error":{"code":"` + code + `","message":"` + code + `"}}`))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if params.Validate(map[string]any{"id": id}) != nil {
			fail(w, 400, "VALIDATION_ERROR")
			return
		}
		if r.Header.Get("Content-Type") != "application/json" {
			fail(w, 415, "UNSUPPORTED_MEDIA_TYPE")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				fail(w, 413, "PAYLOAD_TOO_LARGE")
				return
			}
			fail(w, 400, "BAD_REQUEST")
			return
		}
		val, err := validate.DecodeJSON(body, nil)
		if err != nil {
			fail(w, 400, "BAD_REQUEST")
			return
		}
		if input.Validate(val) != nil {
			fail(w, 400, "VALIDATION_ERROR")
			return
		}
		var in itemIn
		if err := json.Unmarshal(body, &in); err != nil {
			fail(w, 400, "BAD_REQUEST")
			return
		}
		out, err := json.Marshal(update(id, in))
		if err != nil {
			fail(w, 500, "INTERNAL_SERVER_ERROR")
			return
		}
		if output.ValidateJSON(out, nil) != nil {
			fail(w, 500, "INTERNAL_SERVER_ERROR")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		_, _ = w.Write(out)
	})
	return mux
}

type humaInput struct {
	ID   string `path:"id" pattern:"^i_[a-z0-9]+$"`
	Body struct {
		Name  string   `json:"name" minLength:"1" maxLength:"100"`
		Count int      `json:"count" minimum:"0"`
		Tags  []string `json:"tags,omitempty" maxItems:"10" required:"false"`
	}
}

type humaOutput struct {
	Body itemOut
}

// humaHandler is the same operation in huma v2 with equivalent request
// validation (huma also caps bodies at 1 MiB by default and requires a JSON
// content type for this body).
func humaHandler(tb testing.TB) http.Handler {
	mux := http.NewServeMux()
	config := huma.DefaultConfig("items", "1.0.0")
	config.OpenAPIPath, config.DocsPath, config.SchemasPath = "", "", ""
	config.Transformers = nil // no $schema link rewriting: plain JSON out, like the other two
	api := humago.New(mux, config)
	huma.Register(api, huma.Operation{OperationID: "items_update", Method: http.MethodPost, Path: "/items/{id}"},
		func(ctx context.Context, in *humaInput) (*humaOutput, error) {
			out := update(in.ID, itemIn{Name: in.Body.Name, Count: in.Body.Count, Tags: in.Body.Tags})
			return &humaOutput{Body: out}, nil
		})
	return mux
}

// discardWriter is a reusable ResponseWriter, so the benchmark measures the
// handlers, not a recorder.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(s int)   { w.status = s }
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	w.n += len(p)
	return len(p), nil
}

// serveOnce checks that h answers the benchmark request with 200 and the
// expected output, so no side is measured while failing.
func serveOnce(tb testing.TB, h http.Handler) {
	w := &discardWriter{h: http.Header{}}
	var out bytes.Buffer
	req, _ := http.NewRequest("POST", benchPath, bytes.NewReader([]byte(benchBody)))
	req.Header.Set("Content-Type", "application/json")
	rec := &recordWriter{discardWriter: w, body: &out}
	h.ServeHTTP(rec, req)
	var got itemOut
	if w.status != 200 || json.Unmarshal(out.Bytes(), &got) != nil || got.ID != "i_42" || got.Count != 4 || len(got.Tags) != 2 {
		tb.Fatalf("status %d body %s", w.status, out.String())
	}
	// And refuses an invalid body, so its validation is really on.
	w2 := &discardWriter{h: http.Header{}}
	bad, _ := http.NewRequest("POST", benchPath, bytes.NewReader([]byte(`{"name":"","count":-1}`)))
	bad.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w2, bad)
	if w2.status < 400 || w2.status >= 500 {
		tb.Fatalf("invalid body answered %d", w2.status)
	}
}

type recordWriter struct {
	*discardWriter
	body *bytes.Buffer
}

func (w *recordWriter) Write(p []byte) (int, error) {
	w.body.Write(p)
	return w.discardWriter.Write(p)
}

// benchServe runs h on the benchmark request b.N times.
func benchServe(h http.Handler) func(*testing.B) {
	return func(b *testing.B) {
		body := []byte(benchBody)
		rd := bytes.NewReader(body)
		req, _ := http.NewRequest("POST", benchPath, rd)
		req.Header.Set("Content-Type", "application/json")
		w := &discardWriter{h: http.Header{}}
		b.ReportAllocs()
		b.ResetTimer()
		defer reportCPU(b)()
		for range b.N {
			rd.Reset(body)
			req.Body = io.NopCloser(rd)
			req.ContentLength = int64(len(body))
			clear(w.h)
			w.status = 0
			h.ServeHTTP(w, req)
		}
		if w.status != 200 {
			b.Fatalf("status %d", w.status)
		}
	}
}

// BenchmarkHTTPVsNetHTTP: ours vs the hand-written net/http handler.
func BenchmarkHTTPVsNetHTTP(b *testing.B) {
	ours, peer := oursHandler(b), netHTTPHandler(b)
	serveOnce(b, ours)
	serveOnce(b, peer)
	sideBySide(b, benchServe(ours), benchServe(peer))
}

// BenchmarkHTTPVsHuma: ours vs huma v2.
func BenchmarkHTTPVsHuma(b *testing.B) {
	ours, peer := oursHandler(b), humaHandler(b)
	serveOnce(b, ours)
	serveOnce(b, peer)
	sideBySide(b, benchServe(ours), benchServe(peer))
}

// TestHTTPBenchSides runs each side once, so `go test ./bench` proves the
// three handlers answer (and refuse) alike without running the benchmark.
func TestHTTPBenchSides(t *testing.T) {
	for name, h := range map[string]http.Handler{"ours": oursHandler(t), "nethttp": netHTTPHandler(t), "huma": humaHandler(t)} {
		t.Run(name, func(t *testing.T) { serveOnce(t, h) })
	}
}
