package conformance_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Abandoned steps (hung drivers, setups, teardowns) are released by their
// tests' cleanups; nothing may outlive the test binary's tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
