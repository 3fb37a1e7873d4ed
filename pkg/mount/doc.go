// Package mount is the shared runner every transport (HTTP, MCP, Agent,
// CLI) calls: identity → authorize → decode → defaults → validate →
// beforeHandle → handler → afterHandle → output validation → envelope.
package mount
