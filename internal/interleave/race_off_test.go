//go:build !race

package interleave

const raceEnabled = false
