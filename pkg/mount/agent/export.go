package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Exporters: the prepared tools in each provider's tool-definition format,
// as the JSON a request body carries. Every exporter sends each tool's
// InputSchema byte for byte — the document the surface manifest digests —
// so what a model is shown is what the manifest records.
//
// The formats are decoded by the providers' own Go SDKs in this package's
// tests (openai-go v3, anthropic-sdk-go v2, google.golang.org/genai), which
// stay test-only dependencies.

// openAIFunction is the function definition of OpenAI Chat Completions.
type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// OpenAIChatTools returns the tools array of an OpenAI Chat Completions
// request: [{"type":"function","function":{"name","description",
// "parameters","strict"}}]. strict is the Agent policy's: with policy
// agent.strict on, every object of the schema is closed and every property
// required (optional ones nullable), as strict function calling demands.
func (ts *Toolset) OpenAIChatTools() (json.RawMessage, error) {
	type tool struct {
		Type     string         `json:"type"`
		Function openAIFunction `json:"function"`
	}
	out := make([]tool, len(ts.tools))
	for i, t := range ts.tools {
		out[i] = tool{Type: "function", Function: openAIFunction{Name: t.Name, Description: t.Description, Parameters: t.InputSchema, Strict: t.Strict}}
	}
	return marshal(out)
}

// OpenAIResponsesTools returns the tools array of an OpenAI Responses
// request: [{"type":"function","name","description","parameters",
// "strict"}].
func (ts *Toolset) OpenAIResponsesTools() (json.RawMessage, error) {
	type tool struct {
		Type string `json:"type"`
		openAIFunction
	}
	out := make([]tool, len(ts.tools))
	for i, t := range ts.tools {
		out[i] = tool{Type: "function", openAIFunction: openAIFunction{Name: t.Name, Description: t.Description, Parameters: t.InputSchema, Strict: t.Strict}}
	}
	return marshal(out)
}

// AnthropicTools returns the tools array of an Anthropic Messages request:
// [{"name","description","input_schema"}].
func (ts *Toolset) AnthropicTools() (json.RawMessage, error) {
	type tool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	out := make([]tool, len(ts.tools))
	for i, t := range ts.tools {
		out[i] = tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	}
	return marshal(out)
}

// GeminiTools returns the tools array of a Gemini generateContent request:
// one tool holding every function declaration,
// [{"functionDeclarations":[{"name","description","parametersJsonSchema"}]}].
// parametersJsonSchema takes JSON Schema as it is (the older "parameters"
// field takes only an OpenAPI subset).
func (ts *Toolset) GeminiTools() (json.RawMessage, error) {
	type decl struct {
		Name                 string          `json:"name"`
		Description          string          `json:"description,omitempty"`
		ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
	}
	type tool struct {
		FunctionDeclarations []decl `json:"functionDeclarations"`
	}
	decls := make([]decl, len(ts.tools))
	for i, t := range ts.tools {
		decls[i] = decl{Name: t.Name, Description: t.Description, ParametersJSONSchema: t.InputSchema}
	}
	return marshal([]tool{{FunctionDeclarations: decls}})
}

// marshal encodes v without HTML escaping, so schemas keep their bytes.
func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("agent: export: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
