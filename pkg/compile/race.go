//go:build race

package compile

// raceEnabled: the race detector slows evaluation several times over, so
// the evaluation budget grows with it.
const raceEnabled = true
