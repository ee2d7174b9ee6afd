//go:build !race

package etcdexplore_test

const raceEnabled = false
