package review

import "slices"

// Rule documents one rule id: the severity it reports and why.
type Rule struct {
	// ID is the stable rule id of the findings it produces.
	ID string `json:"id"`
	// Severity is "breaking", "warning" or "info", or two of them joined by
	// " or " when the rule's severity depends on context (see Rationale).
	Severity string `json:"severity"`
	// Rationale explains the severity.
	Rationale string `json:"rationale"`
}

// constraintKinds are the schema keywords classified by how they move the
// set of valid values: narrowed (fewer values valid), widened (more) or
// changed (neither a subset nor a superset).
var constraintKinds = []struct{ kind, what string }{
	{"type", "JSON type"},
	{"enum", "enum values"},
	{"const", "const value"},
	{"minimum", "lower bound (minimum, exclusiveMinimum; integer bounds normalised, so >0 equals >=1)"},
	{"maximum", "upper bound (maximum, exclusiveMaximum)"},
	{"multiple-of", "multipleOf"},
	{"min-length", "minLength"},
	{"max-length", "maxLength"},
	{"min-items", "minItems"},
	{"max-items", "maxItems"},
	{"min-properties", "minProperties"},
	{"max-properties", "maxProperties"},
	{"pattern", "pattern (added narrows, removed widens, changed is incomparable)"},
	{"format", "format (added narrows, removed widens, changed is incomparable)"},
	{"unique-items", "uniqueItems"},
	{"arguments", "the number of positional arguments of a realtime event (arity; a position only one side has, e.g. an appended argument)"},
	{"tuple-length", "the number of positional items of a tuple"},
	{"additional-properties", "additionalProperties (closing narrows, opening widens)"},
	{"one-of", "oneOf branches (matched by equality, then by const discriminator, then by position)"},
	{"any-of", "anyOf branches (matched like oneOf)"},
	{"all-of", "allOf members (an added member narrows)"},
}

// fixedRules are the rules whose id does not follow the
// <direction>-<kind>-<effect> pattern.
var fixedRules = []Rule{
	{"http-operation-removed", "breaking", "The route is gone (operation removed or no longer exposed on HTTP): its callers get 404/405."},
	{"http-operation-added", "info", "A new route breaks nobody."},
	{"http-method-changed", "breaking", "Callers using the old method get 405."},
	{"http-path-changed", "breaking", "Callers of the old URL get 404."},
	{"http-success-status-changed", "breaking", "An operation that answered 204 No Content now answers 200 with a body: HTTP callers checking for 204, and clients generated for it, see an unexpected status. (The reverse is response-schema-removed.)"},
	{"http-path-parameter-renamed", "info", "The URLs are unchanged. Tool callers pass path parameters by name: on tool-exposed operations the params schema findings report the rename as breaking, on the tool surfaces."},
	{"tool-removed", "breaking", "A tool (or CLI command) left a surface — the operation was removed, no longer exposed to the transport, or no longer selected by the surface: clients calling it break."},
	{"tool-added", "info", "A new tool breaks nobody."},
	{"tool-renamed", "breaking", "Tools are called by name; the name changed (explicit tool.name, or the derived name of a changed service or action)."},
	{"tool-presentation-narrowed", "warning", "The contract schemas are unchanged but the presentation policy (flattenUnionInput, strict, …) now advertises a narrower input. The server validates with the contract schemas, so every call that succeeded still succeeds; clients that pre-validate against a cached catalog may refuse some."},
	{"tool-presentation-changed", "info", "The presentation policy changed the advertised input without narrowing it; the contract schemas are unchanged."},
	{"tool-annotations-changed", "info", "MCP hints (readOnlyHint, …) are hints, never security."},
	{"mcp-surface-removed", "breaking", "Clients connected to the named (or default) MCP surface lose all its tools."},
	{"mcp-surface-added", "info", "A new MCP surface breaks nobody."},
	{"scope-changed", "breaking or warning", "Breaking when the new scope is not \"public\": callers authorised for the old scope may be refused. A warning when the operation becomes public: nobody breaks, but access widened and a reviewer should confirm it."},
	{"operation-renamed", "warning", "An operation key (service.action) changed while its route (same method and URL shape) — or, for operations without a route, its tool names on every surface — stayed the same: no caller can tell, but audit rows, hooks, authorization rules and generated handler names are keyed on service.action. Schema changes are reported against the new id; a changed tool name is still tool-renamed."},
	{"operation-description-changed", "info", "Descriptions are documentation (HTTP summary, tool description, CLI help)."},
	{"operation-meta-changed", "info", "meta is application metadata; the framework never sends it."},
	{"operation-examples-changed", "info", "Examples are documentation and mock data."},
	{"operation-error-removed", "info", "The operation no longer declares the code; callers handling it keep working."},
	{"operation-error-added", "warning", "A new failure mode callers may not handle."},
	{"error-added", "info", "A new application error code."},
	{"error-removed", "info", "The code left the registry; operations still declaring it are reported per operation."},
	{"error-status-changed", "breaking", "HTTP callers branch on the status of an error code; the finding names the operations declaring the code and their routes (tool results carry the code, not the status)."},
	{"error-message-changed", "info", "Messages are for humans; callers branch on the code."},
	{"error-renamed", "breaking", "A code left the registry and another with the same status took its place in exactly the operations that declared it: callers branching on the old code (HTTP and tools alike, both carry it) never see it again. One finding instead of the codes removed and added."},
	{"runtime-tool-identity-changed", "warning", "Hooks, audit and authorisation see a different service.action or method; tool callers are unaffected."},
	{"runtime-tool-description-changed", "info", "Documentation."},
	{"runtime-tool-meta-changed", "info", "Application metadata."},
	{"cli-command-removed", "breaking", "Scripts calling the CLI-only command break."},
	{"cli-command-added", "info", "A new command breaks nobody."},
	{"cli-command-description-changed", "info", "Help text."},
	{"realtime-contract-removed", "breaking", "Connected clients lose every event of the contract."},
	{"realtime-contract-added", "info", "A new realtime contract breaks nobody."},
	{"realtime-event-removed", "breaking", "Clients emitting a removed clientToServer event are rejected; clients listening for a removed serverToClient event never receive it."},
	{"realtime-event-added", "info", "A new event breaks nobody."},
	{"realtime-event-description-changed", "info", "Documentation."},
	{"realtime-ack-added", "breaking", "Every peer checks an event's id against its contract (docs/realtime-protocol.md). On a serverToClient event, clients built from the old contract refuse the event the server now sends with an id (unexpected-acknowledgement); on a clientToServer event, the server refuses old clients' events, sent without one (missing-acknowledgement), and no rejection can travel back."},
	{"realtime-ack-removed", "breaking", "Every peer checks an event's id against its contract. On a clientToServer event, the server refuses old clients' events, sent with an id (unexpected-acknowledgement), and their requests fail; on a serverToClient event, clients built from the old contract refuse the event the server now sends without the id they expect (missing-acknowledgement)."},
	{"mcp-policy-changed", "info", "The policy itself; each advertised schema it changes is reported per tool under advertisedInput."},
	{"agent-policy-changed", "info", "Like mcp-policy-changed, for the Agent surface."},
	{"contract-renamed", "warning", "Manifests, generated packages and documents are keyed by the contract name."},
	{"contract-version-changed", "info", "Version bookkeeping."},
	{"contract-info-changed", "info", "Documentation."},
	{"suppression-expired", "warning", "The suppression no longer applies: the finding counts again (or the suppression matches nothing and should be removed)."},
	{"suppression-unused", "warning", "The suppression matches no finding: remove it so it cannot hide a future change."},
	{"request-required-property-added", "breaking", "Requests without the new required property are rejected."},
	{"request-optional-property-added", "info", "Callers may send it; nobody has to."},
	{"request-property-removed", "breaking or warning", "Breaking when the schema is closed (additionalProperties false): callers still sending it are rejected. A warning when it is open: the value is accepted and silently ignored."},
	{"request-property-became-required", "breaking", "Requests omitting it are rejected."},
	{"request-property-became-optional", "info", "Requests keep working."},
	{"response-property-added", "info", "More data for callers; unknown fields are ignored by JSON clients. (In a closed object of a realtime event the server sends, see response-closed-object-property-added.)"},
	{"response-closed-object-property-added", "breaking", "A property added to an object the old contract closed, in a value realtime clients receive (arguments of a serverToClient event, the ack of a clientToServer one): clients validate every frame against the contract they were built from and refuse it, as they refuse an appended argument. Reported on the realtime events only; HTTP and tool callers see response-property-added."},
	{"response-closed-object-opened", "breaking", "An object the old contract closed now admits undeclared fields, in a value realtime clients receive: clients validating frames against the old contract refuse any. Reported on the realtime events only; HTTP and tool callers see response-additional-properties-widened."},
	{"response-required-property-removed", "breaking", "Callers reading the property break."},
	{"response-optional-property-removed", "warning", "Callers must already cope with its absence, but those reading it lose data."},
	{"response-property-became-optional", "breaking", "Callers reading it may find it missing."},
	{"response-property-became-required", "info", "Responses promise more."},
	{"response-additional-properties-widened", "warning", "Opening a response object: JSON clients ignore unknown fields, strict or generated clients may not. (Adding one property is info, so opening the object is a warning rather than breaking.)"},
	{"request-schema-added", "breaking or info", "An operation gains #params/#query/#input: breaking when the new schema requires a property, info otherwise."},
	{"request-schema-removed", "breaking", "An operation loses #query or #input: the HTTP mount refuses a query the operation does not declare (and tools the arguments they cannot place); a body is no longer read, so what callers send in it silently stops having an effect."},
	{"response-schema-added", "info", "An operation starts declaring its output."},
	{"response-schema-removed", "breaking", "The output is gone: callers reading it break."},
	{"request-description-changed", "info", "title/description inside a schema: documentation."},
	{"response-description-changed", "info", "title/description inside a schema: documentation."},
	{"request-examples-changed", "info", "Documentation."},
	{"response-examples-changed", "info", "Documentation."},
	{"request-default-changed", "breaking", "The runner fills the default in for callers that omit the value: they silently get a different behaviour, and nothing fails to tell them."},
	{"request-default-added", "warning", "Callers that omit the value now get the default: confirm the handler treated an absent value that way."},
	{"request-default-removed", "warning", "Callers that omit the value no longer get the default: the handler now sees it absent."},
	{"response-default-changed", "info", "Documentation of responses."},
	{"response-default-added", "info", "Documentation of responses."},
	{"response-default-removed", "info", "Documentation of responses."},
	{"version-major-bump-missing", "warning or info", "SemVer §8: backwards incompatible changes need a new major version. A warning from 1.0.0 on; info for 0.y.z, where SemVer §4 lets anything change (callers pinning ^0.y still expect a new minor version)."},
	{"version-minor-bump-missing", "info", "SemVer §7: added backwards compatible functionality (operations, tools, events, optional fields, wider requests) asks for a new minor version."},
	{"version-decreased", "warning", "SemVer versions only increase; a lower version hides the release from anyone comparing versions."},
	{"request-deprecated", "warning", "Callers should migrate."},
	{"response-deprecated", "warning", "Callers should migrate."},
	{"request-undeprecated", "info", "Deprecation withdrawn."},
	{"response-undeprecated", "info", "Deprecation withdrawn."},
	{"request-annotation-changed", "info", "readOnly/writeOnly are annotations."},
	{"response-annotation-changed", "info", "readOnly/writeOnly are annotations."},
	{"request-one-of-changed", "breaking or warning", "Breaking when the whole sets were decided and each version admits values the other refuses (a union of variants turned into one object, or the reverse, neither including the other). A warning when a union appeared or disappeared next to other keywords and the sets could not be decided: review by hand."},
	{"response-one-of-changed", "breaking or warning", "As request-one-of-changed, for values the server sends."},
	{"request-any-of-changed", "breaking or warning", "As request-one-of-changed, for anyOf."},
	{"response-any-of-changed", "breaking or warning", "As response-one-of-changed, for anyOf."},
	{"request-schema-keyword-changed", "warning", "A keyword the classifier does not model (not, if/then/else, patternProperties, propertyNames, …) changed: review by hand."},
	{"response-schema-keyword-changed", "warning", "A keyword the classifier does not model changed: review by hand."},
}

// Rules returns every rule id with its severity and rationale, sorted by
// id. Schema constraint rules are named <direction>-<kind>-<effect>:
// direction request (values the server receives) or response (values it
// sends); effect narrowed (fewer values valid), widened (more) or changed
// (neither). Narrowing a request or widening a response breaks callers; the
// opposite moves are info; changed is breaking either way.
func Rules() []Rule {
	out := slices.Clone(fixedRules)
	for _, dir := range []Direction{Request, Response} {
		for _, k := range constraintKinds {
			for _, e := range []effect{narrowed, widened, changed} {
				id := dir.String() + "-" + k.kind + "-" + e.String()
				if slices.ContainsFunc(out, func(r Rule) bool { return r.ID == id }) {
					continue
				}
				why := k.what + " " + e.String() + " on values the server "
				if dir == Request {
					why += "receives"
				} else {
					why += "sends"
				}
				switch severityOf(dir, e) {
				case Breaking:
					why += ": breaks callers."
				default:
					why += ": compatible."
				}
				out = append(out, Rule{ID: id, Severity: string(severityOf(dir, e)), Rationale: why})
			}
		}
	}
	// response-additional-properties-widened is a warning, documented
	// above; the generated entry would say breaking.
	slices.SortFunc(out, func(a, b Rule) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

func ruleByID(id string) (Rule, bool) {
	for _, r := range Rules() {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
