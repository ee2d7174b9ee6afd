//go:build race

package etcdexplore_test

// raceEnabled: the race detector slows the explorer about tenfold; the
// long runs explore less under it (.ci/run runs the whole catalogue with
// tollgate explore -backend etcd, built without it).
const raceEnabled = true
