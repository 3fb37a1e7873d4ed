package graph

// FrameworkErrors is the built-in error registry: the only codes the
// framework itself ever emits. Application codes are declared in the
// contract; an application code may repeat a framework code only with the
// same status.
var FrameworkErrors = []ErrorCode{
	{Code: "BAD_REQUEST", Status: 400, Message: "Bad request"},
	{Code: "CONFLICT", Status: 409, Message: "Conflict"},
	{Code: "FORBIDDEN", Status: 403, Message: "Forbidden"},
	{Code: "INTERNAL_SERVER_ERROR", Status: 500, Message: "Internal server error", Internal: true},
	{Code: "METHOD_NOT_ALLOWED", Status: 405, Message: "Method not allowed"},
	{Code: "NOT_FOUND", Status: 404, Message: "Not found"},
	{Code: "NOT_IMPLEMENTED", Status: 501, Message: "Not implemented"},
	{Code: "PAYLOAD_TOO_LARGE", Status: 413, Message: "Payload too large"},
	{Code: "RATE_LIMITED", Status: 429, Message: "Rate limited"},
	{Code: "REALTIME_CONTRACT_VIOLATION", Status: 500, Message: "Realtime contract violation", Internal: true},
	{Code: "REALTIME_REQUEST_DISCONNECTED", Status: 503, Message: "Realtime peer disconnected"},
	{Code: "REALTIME_REQUEST_INVALID_ACKNOWLEDGEMENT", Status: 502, Message: "Invalid realtime acknowledgement"},
	{Code: "REALTIME_REQUEST_REJECTED", Status: 409, Message: "Realtime request rejected by peer"},
	{Code: "REALTIME_REQUEST_TIMEOUT", Status: 504, Message: "Realtime request timed out"},
	{Code: "SERVICE_UNAVAILABLE", Status: 503, Message: "Service unavailable"},
	{Code: "TIMEOUT", Status: 408, Message: "Timeout"},
	{Code: "UNAUTHORIZED", Status: 401, Message: "Unauthorized"},
	{Code: "UNSUPPORTED_MEDIA_TYPE", Status: 415, Message: "Unsupported media type"},
	{Code: "VALIDATION_ERROR", Status: 400, Message: "Validation error"},
}

// FrameworkError returns the framework registry entry for code.
func FrameworkError(code string) (ErrorCode, bool) {
	for _, e := range FrameworkErrors {
		if e.Code == code {
			return e, true
		}
	}
	return ErrorCode{}, false
}
