package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/project"
)

// maxResponseBytes caps what a remote answer may hold.
const maxResponseBytes = 32 << 20

// remoteRoute is how a command reaches its operation over HTTP.
type remoteRoute struct {
	method string
	path   string // the route below the mount prefix, {name} wildcards
	op     *graph.Operation
	split  project.ArgSplitter
}

// remoteRoutes are the HTTP routes of the projection's operations, below
// the HTTP prefix (--server carries it).
func remoteRoutes(p *project.Projection) map[*graph.Operation]*remoteRoute {
	out := map[*graph.Operation]*remoteRoute{}
	for _, r := range p.Routes() {
		out[r.Op] = &remoteRoute{method: r.Method, path: r.Local, op: r.Op}
	}
	return out
}

// runRemote calls the command's operation on the HTTP mount at --server:
// the flat arguments split back into path, query and body by the
// projector's rule, and an error envelope turned back into its code.
func (a *App) runRemote(ctx context.Context, c *command, args map[string]any) (json.RawMessage, error) {
	rt := c.remote
	if rt == nil {
		return nil, mount.Errorf(mount.CodeBadRequest, "%s is a runtime tool: it has no HTTP route, so it cannot run with --server", c.name)
	}
	params, query, input := map[string]any{}, url.Values{}, map[string]any{}
	for k, v := range args {
		switch rt.split.Part(k) {
		case project.PartParams:
			params[k] = v
		case project.PartQuery:
			addQuery(query, k, v)
		default:
			input[k] = v
		}
	}
	path, err := fillPath(rt.path, params)
	if err != nil {
		return nil, err
	}
	var body io.Reader
	switch {
	case rt.op.Input != "" || (len(input) > 0 && rt.method != "GET" && rt.method != "DELETE"):
		b, err := json.Marshal(input)
		if err != nil {
			return nil, mount.NewError(mount.CodeBadRequest, err.Error())
		}
		body = bytes.NewReader(b)
	default:
		// Keys the operation does not take go where the server judges
		// them: the query (an undeclared field is refused there).
		for k, v := range input {
			addQuery(query, k, v)
		}
	}
	u := strings.TrimSuffix(a.server, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, rt.method, u, body)
	if err != nil {
		return nil, mount.Errorf(mount.CodeBadRequest, "--server %q: %v", a.server, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range a.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	for _, h := range a.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, mount.Errorf(mount.CodeBadRequest, `--header %q: want "Name: value"`, h)
		}
		req.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	client := a.opts.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, mount.Errorf(mount.CodeServiceUnavailable, "cannot reach %s: %v", a.server, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, mount.Errorf(mount.CodeServiceUnavailable, "reading the answer of %s: %v", a.server, err)
	}
	if len(b) > maxResponseBytes {
		return nil, mount.Errorf(mount.CodeInternal, "the answer of %s exceeds %d bytes", a.server, maxResponseBytes)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if resp.StatusCode == http.StatusNoContent || len(bytes.TrimSpace(b)) == 0 {
			return nil, nil
		}
		return b, nil
	}
	return nil, a.remoteError(resp.StatusCode, b)
}

// remoteError rebuilds the error an HTTP mount answered: its envelope's
// code, message and details; a body that is no envelope gets the first
// registry code with the status (INTERNAL_SERVER_ERROR when none has it).
func (a *App) remoteError(status int, body []byte) *mount.Error {
	var env struct {
		Error *struct {
			Code    mount.Code     `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil && env.Error.Code != "" {
		return &mount.Error{Code: env.Error.Code, Status: status, Message: env.Error.Message, Details: env.Error.Details}
	}
	code := mount.CodeInternal
	for _, e := range a.g.ErrorRegistry() {
		if e.Status == status {
			code = mount.Code(e.Code)
			break
		}
	}
	return &mount.Error{Code: code, Status: status, Message: fmt.Sprintf("%s answered %d without an error envelope", a.server, status)}
}

// fillPath substitutes the path wildcards with the params' values.
func fillPath(pattern string, params map[string]any) (string, error) {
	segs := strings.Split(pattern, "/")
	for i, s := range segs {
		if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
			continue
		}
		name, rest := strings.CutSuffix(s[1:len(s)-1], "...")
		v, ok := params[name]
		if !ok {
			return "", &mount.Error{Code: mount.CodeValidation, Message: fmt.Sprintf("Invalid params: missing property '%s'", name),
				Details: map[string]any{"issues": []mount.Issue{{In: project.PartParams, Keyword: "required", Message: fmt.Sprintf("missing property '%s'", name)}}}}
		}
		text := wireText(v)
		if rest {
			parts := strings.Split(text, "/")
			for j, p := range parts {
				parts[j] = url.PathEscape(p)
			}
			segs[i] = strings.Join(parts, "/")
		} else {
			segs[i] = url.PathEscape(text)
		}
	}
	return strings.Join(segs, "/"), nil
}

// addQuery adds a query value: a list as repeated keys, a scalar as its
// text, anything else as JSON (which the server then judges).
func addQuery(q url.Values, k string, v any) {
	if l, ok := v.([]any); ok {
		for _, e := range l {
			q.Add(k, wireText(e))
		}
		return
	}
	q.Add(k, wireText(v))
}

// wireText is a value as a path or query string.
func wireText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "true"
		}
		return "false"
	case nil:
		return "null"
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}
