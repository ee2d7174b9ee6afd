// Package seam is the one door through which impl/ touches shared memory:
// every slot word, counter, flag, bucket word and trie child word is one of
// its types. In the default build each method is the sync/atomic method of
// the same name and inlines to the same instructions (CI checks the compiler
// output: scripts/seam-inline.sh). Under the build tag tollgate_explore each
// operation first hands control to the interleaving explorer
// (internal/explore), which decides which logical thread runs next; that
// makes every atomic operation of the real code a switch point.
//
// Go's atomics are sequentially consistent (the Go memory model), so
// exploring the interleavings of these operations is exact for them; plain
// memory is left to the race detector.
package seam
