// Package sdkcheck holds no code, only the tests that decode the Agent
// mount's exported tool definitions with the providers' official Go SDKs
// (openai-go v3, anthropic-sdk-go v2, google.golang.org/genai). They live
// apart so that those large SDKs are compiled only for these tests, not
// for every test or fuzz build of pkg/mount/agent.
package sdkcheck
