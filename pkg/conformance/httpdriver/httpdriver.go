// Package httpdriver is the conformance probe driver for the HTTP
// transport: it sends a probe's [conformance.Call] as the HTTP request the
// contract routes it to, through a client and server the caller owns, and
// normalises the answer into a [conformance.Observation].
//
//	d, err := httpdriver.New(p, &httpdriver.Options{BaseURL: srv.URL, Client: srv.Client()}) // p: the server's projection
//	err = conformance.RunProbes(ctx, probes, conformance.Drivers{conformance.TransportHTTP: d}, nil)
//
// The driver opens no port and invents no credentials: authentication is
// the caller's Client (its Transport) or Header.
package httpdriver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/project"
)

// DefaultMaxResponseBytes caps the response body the driver reads.
const DefaultMaxResponseBytes = 4 << 20

// Options configures [New].
type Options struct {
	// BaseURL is the server's origin ("http://127.0.0.1:8080"); required.
	BaseURL string
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// Header is added to every request (credentials the caller holds).
	Header http.Header
	// MaxResponseBytes caps the body read (DefaultMaxResponseBytes when 0).
	MaxResponseBytes int64
}

// New returns the HTTP driver of the projection's routes (with its HTTP
// prefix: pass the projection the server's mount was built from) at
// opts.BaseURL.
//
// Per call it finds the route of Call.Operation, splits Call.Args with the
// projector's rule into path wildcards, query string (a list is repeated,
// ?tag=a&tag=b) and JSON body, and sends the request with the probe's
// context. A 2xx answer is a success with the JSON body as data (none for
// an empty body); an error envelope {"error":{"code","details"?}} is
// [conformance.ErrorObservation]; anything else is a domain_error whose
// diagnostic is the status and body.
func New(p *project.Projection, opts *Options) (conformance.Driver, error) {
	if p == nil {
		return nil, errors.New("httpdriver: nil projection")
	}
	if opts == nil || opts.BaseURL == "" {
		return nil, errors.New("httpdriver: Options.BaseURL is required")
	}
	base, err := url.Parse(strings.TrimSuffix(opts.BaseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("httpdriver: BaseURL: %w", err)
	}
	d := &driver{p: p, base: base, client: opts.Client, header: opts.Header, max: opts.MaxResponseBytes, routes: map[string]project.Route{}, query: map[string]*project.WireObject{}}
	if d.client == nil {
		d.client = http.DefaultClient
	}
	if d.max <= 0 {
		d.max = DefaultMaxResponseBytes
	}
	for _, r := range p.Routes() {
		if r.Method != r.Op.Method {
			continue
		}
		if _, ok := d.routes[r.Op.ID()]; !ok {
			d.routes[r.Op.ID()] = r
		}
		if w := p.Endpoint(r.Op.Service, r.Op.Action).WireQuery; w != nil {
			d.query[r.Op.ID()] = w
		}
	}
	return d, nil
}

type driver struct {
	p      *project.Projection
	base   *url.URL
	client *http.Client
	header http.Header
	max    int64
	routes map[string]project.Route
	query  map[string]*project.WireObject
}

func (d *driver) Invoke(ctx context.Context, fixture any) (conformance.Observation, error) {
	call, err := conformance.AsCall(fixture)
	if err != nil {
		return conformance.Observation{}, err
	}
	req, err := d.request(ctx, call)
	if err != nil {
		return conformance.Observation{}, err
	}
	res, err := d.client.Do(req)
	if err != nil {
		return conformance.Observation{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, d.max+1))
	if err != nil {
		return conformance.Observation{}, fmt.Errorf("reading the response: %w", err)
	}
	if int64(len(body)) > d.max {
		return conformance.Observation{}, fmt.Errorf("response body over %d bytes", d.max)
	}
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		o, err := conformance.OutputObservation(body)
		if err != nil {
			return conformance.Observation{Outcome: conformance.OutcomeDomainError, Diagnostic: fmt.Sprintf("HTTP %d with a body that is not JSON: %s", res.StatusCode, body)}, nil
		}
		return o, nil
	}
	var env struct {
		Error *struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error == nil || env.Error.Code == "" {
		return conformance.Observation{Outcome: conformance.OutcomeDomainError, Diagnostic: fmt.Sprintf("HTTP %d without an error envelope: %s", res.StatusCode, body)}, nil
	}
	return conformance.ErrorObservation(env.Error.Code, env.Error.Details), nil
}

// request builds the HTTP request of call.
func (d *driver) request(ctx context.Context, call conformance.Call) (*http.Request, error) {
	route, ok := d.routes[call.Operation]
	if !ok {
		return nil, fmt.Errorf("operation %q has no HTTP route", call.Operation)
	}
	raw, err := call.RawArgs()
	if err != nil {
		return nil, err
	}
	params, query, input := d.p.Endpoint(route.Op.Service, route.Op.Action).Split.Split(raw)
	path, err := fillPath(route.Path, params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", call.Operation, err)
	}
	u := *d.base
	escaped := strings.TrimSuffix(u.EscapedPath(), "/") + path
	if u.Path, err = url.PathUnescape(escaped); err != nil {
		return nil, err
	}
	u.RawPath = escaped
	if len(query) > 0 {
		q := url.Values{}
		for k, v := range query {
			var field *project.WireField
			if w := d.query[call.Operation]; w != nil {
				field = w.Field(k)
			}
			list, err := wireStrings(v, field)
			if err != nil {
				return nil, fmt.Errorf("query %q: %w", k, err)
			}
			q[k] = list
		}
		u.RawQuery = q.Encode()
	}
	if input == nil && route.Op.Input != "" {
		// The tools see the arguments minus params and query, {} here.
		input = map[string]json.RawMessage{}
	}
	var body io.Reader
	if input != nil {
		b, err := json.Marshal(input)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, route.Method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, vs := range d.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// fillPath substitutes the {name} and final {name...} wildcards of a route
// pattern with the params' wire strings (escaped, except a final
// wildcard's slashes).
func fillPath(pattern string, params map[string]json.RawMessage) (string, error) {
	var b strings.Builder
	rest := pattern
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("route %q: unclosed wildcard", pattern)
		}
		b.WriteString(rest[:i])
		name := rest[i+1 : i+j]
		tail := strings.HasSuffix(name, "...")
		name = strings.TrimSuffix(name, "...")
		v, ok := params[name]
		if !ok {
			return "", fmt.Errorf("no argument for the path parameter %q", name)
		}
		s, err := wireString(v)
		if err != nil {
			return "", fmt.Errorf("path parameter %q: %w", name, err)
		}
		if tail {
			segs := strings.Split(s, "/")
			for k := range segs {
				segs[k] = url.PathEscape(segs[k])
			}
			b.WriteString(strings.Join(segs, "/"))
		} else {
			b.WriteString(url.PathEscape(s))
		}
		rest = rest[i+j+1:]
	}
}

// wireString is the wire text of a scalar JSON value: a string as is,
// anything else as its JSON text (so 5, true and null read back through the
// schema's type).
func wireString(v json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, nil
	}
	t := bytes.TrimSpace(v)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return "", fmt.Errorf("%s cannot travel as a string", t)
	}
	return string(t), nil
}

// wireStrings is the wire text of a query value: one string per element of
// a list, one string for a scalar.
func wireStrings(v json.RawMessage, f *project.WireField) ([]string, error) {
	var list []json.RawMessage
	if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '[' && json.Unmarshal(t, &list) == nil && (f == nil || f.List) {
		out := make([]string, 0, len(list))
		for _, e := range list {
			s, err := wireString(e)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := wireString(v)
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}
