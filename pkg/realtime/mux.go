package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/project"
)

// DefaultPrefix is the path realtime contracts are served under: contract
// "board" at "/realtime/board". The AsyncAPI export uses the same default
// for its channel addresses.
const DefaultPrefix = "/realtime"

// Service is what a [Mux] serves: a [Server] of any identity type.
type Service interface {
	http.Handler
	// Name is the contract's name: the last path segment.
	Name() string
	Shutdown(ctx context.Context) error
}

// Mux serves several realtime contracts under one prefix, each at
// prefix/{contract}. A path naming no contract is 404 with the error
// envelope.
type Mux struct {
	prefix   string
	services map[string]Service
	names    []string
}

// NewMux returns a mux for services under prefix ("" means
// [DefaultPrefix]). Two services of one name are an error.
func NewMux(prefix string, services ...Service) (*Mux, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	prefix = "/" + strings.Trim(prefix, "/")
	if prefix == "/" {
		prefix = ""
	}
	m := &Mux{prefix: prefix, services: map[string]Service{}}
	for _, s := range services {
		if _, dup := m.services[s.Name()]; dup {
			return nil, fmt.Errorf("realtime: contract %q is served twice", s.Name())
		}
		m.services[s.Name()] = s
		m.names = append(m.names, s.Name())
	}
	slices.SortFunc(m.names, graph.CompareUTF16)
	return m, nil
}

// Pattern is the ServeMux pattern that routes every contract path to m:
// http.Handle(m.Pattern(), m).
func (m *Mux) Pattern() string { return m.prefix + "/" }

// Path returns the endpoint path of a contract.
func (m *Mux) Path(contract string) string { return m.prefix + "/" + contract }

// Contracts returns the names served, sorted.
func (m *Mux) Contracts() []string { return slices.Clone(m.names) }

// ServeHTTP routes prefix/{contract} to the contract's server.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, m.prefix+"/")
	if s := m.services[rest]; ok && s != nil && rest != "" {
		s.ServeHTTP(w, r)
		return
	}
	writeHTTPError(w, &mount.Error{Code: mount.CodeNotFound, Message: "no realtime contract at " + r.URL.Path,
		Details: map[string]any{"contracts": m.Contracts()}})
}

// Shutdown shuts every server down (see [Server.Shutdown]).
func (m *Mux) Shutdown(ctx context.Context) error {
	var errs []error
	for _, name := range m.names {
		if err := m.services[name].Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// ServeExamples returns a [Mux] with one server per realtime contract of
// the projection that answers from the contract itself, with no application code (what
// `stitch serve` mounts): a valid clientToServer event that takes an
// acknowledgement is acked with the ack of its first example that has
// one, or refused with NOT_IMPLEMENTED; a valid event without an ack is
// accepted. Invalid frames are rejected as by any server. opts applies to
// every server (nil: defaults).
func ServeExamples(p *project.Projection, prefix string, opts *Options[struct{}]) (*Mux, error) {
	contracts, err := Contracts(p)
	if err != nil {
		return nil, err
	}
	var services []Service
	fail := func(err error) (*Mux, error) {
		for _, s := range services {
			_ = s.Shutdown(context.Background())
		}
		return nil, err
	}
	for _, c := range contracts {
		srv, err := NewServer(c, opts)
		if err != nil {
			return fail(err)
		}
		services = append(services, srv)
		for _, name := range c.Events(graph.ClientToServer) {
			spec := c.c2s[name]
			h := exampleHandler(spec)
			if err := srv.Handle(name, h); err != nil {
				return fail(err)
			}
		}
	}
	m, err := NewMux(prefix, services...)
	if err != nil {
		return fail(err)
	}
	return m, nil
}

func exampleHandler(spec *eventSpec) Handler[struct{}] {
	if spec.ack == nil {
		return func(context.Context, *Conn[struct{}], Args) (any, error) { return nil, nil }
	}
	for _, ex := range spec.examples {
		if ex.Ack != nil {
			ack := json.RawMessage(ex.Ack)
			return func(context.Context, *Conn[struct{}], Args) (any, error) { return ack, nil }
		}
	}
	return func(context.Context, *Conn[struct{}], Args) (any, error) {
		return nil, mount.Errorf(codeNotImplemented, "%q has no example acknowledgement to answer with", spec.name)
	}
}
