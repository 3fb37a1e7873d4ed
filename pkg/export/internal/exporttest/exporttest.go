// Package exporttest holds the contract the exporters' tests compile: the
// DESIGN §3 tasks contract plus a trailing-wildcard route, a second
// realtime contract and an empty one.
package exporttest

// Files is the contract as compile.CompileFiles input.
var Files = map[string][]byte{"tasks.cue": []byte(Contract)}

// Contract is the CUE source of the contract.
const Contract = `package tasks

import (
	"strings"
	"stitchkit.dev/stitchkit/schema"
)

#Task: {
	id:    string & =~"^t_[a-z0-9]+$"
	title: string & strings.MinRunes(1) & strings.MaxRunes(200)
	done:  bool
	tags?: [...string]
}

schema.#Contract & {
	name:    "tasks"
	version: "1.0.0"

	errors: TASK_NOT_FOUND: {status: 404, message: "Task not found"}

	services: tasks: {
		scope: "user"
		operations: {
			list: {
				method: "GET", path: "/", desc: "List tasks"
				#query: {limit?: int & >=1 & <=100, cursor?: string, tag?: [...string]}
				#output: {items: [...#Task], next?: string}
				expose: ["HTTP", "MCP", "AGENT", "CLI"]
			}
			create: {method: "POST", path: "/", desc: "Create a task", #input: {title: string}, #output: #Task}
			get: {
				method: "GET", path: "/{id}", desc: "Get one task"
				#params: {id: string}
				#output: #Task
				errors: ["TASK_NOT_FOUND"]
			}
			complete: {method: "POST", path: "/{id}/complete", desc: "Mark a task done", #output: #Task}
			files: {method: "GET", path: "/{id}/files/{rest...}", desc: "Read a task file", #output: {body: string}}
			purge: {method: "DELETE", path: "/", desc: "Delete all tasks", scope: "admin", expose: ["HTTP"]}
			mcponly: {method: "POST", path: "/mcp-only", desc: "MCP only", expose: ["MCP"]}
		}
	}

	realtime: {
		board: {
			serverToClient: taskChanged: {#args: [#Task]}
			clientToServer: watch: {#args: [{board: string}], #ack: {ok: bool}}
		}
		quiet: {}
	}
}
`
