package mount

import (
	"context"
	"fmt"
	"net/http"
	"slices"
)

// Authentication at the edge: one hook for every transport that arrives
// over HTTP (the HTTP mount, MCP over streamable HTTP, the realtime
// handshake). A transport hands the runner the request's headers before
// it reads any body byte ([Runner.Authenticate]); the authenticator turns
// them into a [Principal] with scopes, which rides in the context to
// every hook and handler of the calls that follow ([Call.Principal],
// [PrincipalFrom]). Authorization (Hooks.Authorize) then decides per
// operation from the principal and the call's identity and scope.

// Principal is who makes a call, as the authenticator resolved it.
type Principal struct {
	// Subject names the caller (a user or client id). An authenticated
	// principal has one; it also keys stateful MCP sessions to their
	// opener.
	Subject string
	// Scopes are the scopes the caller holds.
	Scopes []string
	// Claims carry whatever else the authenticator wants hooks and
	// handlers to see (a tenant, a token's expiry).
	Claims map[string]any
}

// HasScope reports whether the principal holds scope.
func (p *Principal) HasScope(scope string) bool {
	return p != nil && slices.Contains(p.Scopes, scope)
}

// EdgeRequest is what an authenticator sees of an incoming request: its
// transport, method, path, peer address and headers — never its body,
// which no transport has read yet.
type EdgeRequest struct {
	// Source is the transport the request arrived on.
	Source Source
	// Method and Path are the request line's (Path without the query).
	Method, Path string
	// RemoteAddr is the peer's address, as net/http reports it.
	RemoteAddr string
	// Header is the request's header. Do not modify it.
	Header http.Header
}

// NewEdgeRequest returns the edge view of an HTTP request.
func NewEdgeRequest(src Source, r *http.Request) *EdgeRequest {
	return &EdgeRequest{Source: src, Method: r.Method, Path: r.URL.Path, RemoteAddr: r.RemoteAddr, Header: r.Header}
}

// Authenticator resolves the caller of a request from its headers. It
// returns the principal (nil, with a nil error, for an anonymous caller
// the application lets through), or an error to refuse the request: an
// *Error with code UNAUTHORIZED or FORBIDDEN is answered as itself,
// anything else as 401 UNAUTHORIZED (the cause logged, never sent).
type Authenticator func(ctx context.Context, req *EdgeRequest) (*Principal, error)

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal an authenticator resolved for the
// request ctx belongs to, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// Authenticate runs the runner's authenticator (Options.Authenticate) on
// a request a transport has not read the body of, and returns the context
// the request's calls run in (carrying the principal). Without an
// authenticator it returns ctx. A refusal is returned normalised: an
// UNAUTHORIZED answer should carry a WWW-Authenticate header with
// [Runner.Challenge]. A panic in the authenticator is an
// INTERNAL_SERVER_ERROR.
func (r *Runner) Authenticate(ctx context.Context, req *EdgeRequest) (context.Context, *Error) {
	if r.authenticate == nil {
		return ctx, nil
	}
	p, err := r.runAuthenticator(ctx, req)
	if err != nil {
		e, ok := AsError(err)
		if !ok || (e.Code != CodeUnauthorized && e.Code != CodeForbidden && e.Code != CodeInternal) {
			e = NewError(CodeUnauthorized, "").WithCause(err)
		}
		return ctx, r.Normalize(ctx, nil, e)
	}
	if p == nil {
		return ctx, nil
	}
	return WithPrincipal(ctx, p), nil
}

func (r *Runner) runAuthenticator(ctx context.Context, req *EdgeRequest) (p *Principal, err error) {
	defer func() {
		if v := recover(); v != nil {
			p, err = nil, NewError(CodeInternal, "").WithCause(fmt.Errorf("Authenticate panicked: %v", v))
		}
	}()
	return r.authenticate(ctx, req)
}

// Challenge is the WWW-Authenticate value of a 401 answer
// (Options.Challenge, "Bearer" by default).
func (r *Runner) Challenge() string {
	if r.challenge == "" {
		return "Bearer"
	}
	return r.challenge
}

// Authenticates reports whether the runner has an authenticator.
func (r *Runner) Authenticates() bool { return r.authenticate != nil }
