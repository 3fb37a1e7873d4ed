//go:build race

package cueschema

const raceEnabled = true
