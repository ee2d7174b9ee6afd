// Package seam is the one door through which impl/ touches shared memory:
// every slot word, counter, flag, bucket word and trie child word is one of
// its types. Each method is the sync/atomic method of the same name and
// inlines to the same instructions (CI checks the compiler's inlining
// decisions: scripts/seam-inline.sh), so the real tables pay nothing for
// the seam.
//
// Its twin, internal/seam/hooked, has the same types with every operation a
// switch point. go generate (internal/mutants/gen) writes copies of the
// impl packages that differ from them only in importing the twin; the
// interleaving explorer (internal/explore) drives those copies. Go's atomics
// are sequentially consistent (the Go memory model), so exploring the
// interleavings of these operations is exact for them; plain memory is left
// to the race detector.
package seam
