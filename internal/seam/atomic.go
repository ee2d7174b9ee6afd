package seam

import "sync/atomic"

// The seam's types are sync/atomic's own: in the real build an operation
// through the seam is the sync/atomic operation, with no wrapper for the
// inliner to weigh. impl/ uses only the methods internal/seam/hooked also
// has (Load, Store, CompareAndSwap; Add on Uint64; all six of Pair's), so a
// copy that imports the hooked twin instead compiles unchanged.
type (
	Pointer[T any] = atomic.Pointer[T]
	Uint64         = atomic.Uint64
	Bool           = atomic.Bool
)
