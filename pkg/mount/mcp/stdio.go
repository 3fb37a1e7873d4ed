package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultStdioDrain bounds how long a line session whose input has ended
// waits for the answers of requests still running before it ends.
const DefaultStdioDrain = 30 * time.Second

// ServeLines serves one surface over newline-delimited JSON-RPC: the
// messages arrive on in, one a line, and the answers go to out, one a
// line (what ServeStdio does over standard input and output). Unlike the
// SDK's own stdio transport:
//
//   - a line that is not JSON is answered with a JSON-RPC -32700 error, a
//     line that is not one JSON-RPC message (a batch, a bad envelope, a
//     line over Options.MaxBodyBytes) with -32600, and the session goes
//     on — one bad line does not end it;
//   - when in ends, the requests already read are still answered (for at
//     most DefaultStdioDrain) before the session ends.
func (h *Handler) ServeLines(ctx context.Context, surface string, in io.Reader, out io.Writer) error {
	return h.Run(ctx, surface, &lineTransport{in: in, out: out, maxLine: h.maxBody, drain: DefaultStdioDrain})
}

// lineTransport is the sdk.Transport of ServeLines.
type lineTransport struct {
	in      io.Reader
	out     io.Writer
	maxLine int64
	drain   time.Duration
}

func (t *lineTransport) Connect(context.Context) (sdk.Connection, error) {
	c := &lineConn{out: t.out, drain: t.drain, lines: make(chan lineRead), closed: make(chan struct{}),
		pending: map[string]struct{}{}}
	go c.readLines(bufio.NewReaderSize(t.in, 64<<10), t.maxLine)
	return c, nil
}

// lineRead is one message (or the end of input) from the reader.
type lineRead struct {
	msg jsonrpc.Message
	err error
}

// lineConn is one line session: a reader goroutine decodes lines (and
// answers the bad ones itself), Read hands messages to the SDK, and
// pending holds the ids of requests read but not yet answered.
type lineConn struct {
	out   io.Writer
	drain time.Duration
	lines chan lineRead

	wmu sync.Mutex // serialises lines written to out

	mu      sync.Mutex
	pending map[string]struct{}
	idle    chan struct{} // closed when pending empties, while someone waits

	closeOnce sync.Once
	closed    chan struct{}
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// readLines reads the input to its end. It is the only reader of in; a
// line it cannot hand on is answered here.
func (c *lineConn) readLines(in *bufio.Reader, maxLine int64) {
	for {
		line, tooLong, err := readLine(in, maxLine)
		if t := bytes.TrimSpace(line); len(t) > 0 || tooLong {
			var msg jsonrpc.Message
			var derr error
			switch {
			case tooLong:
				c.writeError(codeInvalidRequest, fmt.Sprintf("Invalid request: a message is larger than %d bytes", maxLine))
			case !json.Valid(t):
				c.writeError(codeParseError, "Parse error: the line is not JSON")
			case t[0] == '[':
				c.writeError(codeInvalidRequest, "JSON-RPC batches are not supported (MCP removed them in 2025-06-18): send one message per line")
			default:
				if msg, derr = jsonrpc.DecodeMessage(t); derr != nil {
					c.writeError(codeInvalidRequest, "Invalid request: "+derr.Error())
					msg = nil
				}
			}
			if msg != nil {
				if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
					c.mu.Lock()
					c.pending[idKey(req.ID)] = struct{}{}
					c.mu.Unlock()
				}
				select {
				case c.lines <- lineRead{msg: msg}:
				case <-c.closed:
					return
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			select {
			case c.lines <- lineRead{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// readLine reads one line without its newline; a line longer than max is
// skipped to its end and reported as tooLong.
func readLine(in *bufio.Reader, max int64) (line []byte, tooLong bool, err error) {
	for {
		frag, ferr := in.ReadSlice('\n')
		if !tooLong {
			if int64(len(line)+len(frag)) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if ferr == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, ferr
	}
}

// Read hands the SDK the next message. At the end of input it first waits
// for the answers of the requests in flight (bounded by drain).
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case r := <-c.lines:
		if r.err != nil {
			c.waitIdle(ctx)
			return nil, r.err
		}
		return r.msg, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *lineConn) waitIdle(ctx context.Context) {
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		return
	}
	c.idle = make(chan struct{})
	idle := c.idle
	c.mu.Unlock()
	t := time.NewTimer(c.drain)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
	case <-c.closed:
	}
}

// Write writes one message as a line; an answer settles its request.
func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if err := c.writeLine(b); err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, idKey(resp.ID))
		if len(c.pending) == 0 && c.idle != nil {
			close(c.idle)
			c.idle = nil
		}
		c.mu.Unlock()
	}
	return nil
}

func (c *lineConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return errors.New("mcp: connection closed")
	default:
	}
	_, err := c.out.Write(append(b, '\n'))
	return err
}

// writeError answers a line that is no message (id null: it has none the
// server can trust).
func (c *lineConn) writeError(code int, message string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": code, "message": message}})
	_ = c.writeLine(b)
}

// Close ends the session; the reader goroutine stops at its next line
// (standard input cannot be interrupted).
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *lineConn) SessionID() string { return "" }
