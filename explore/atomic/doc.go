// Package atomic is the twin of the standard library's sync/atomic that
// tollgate explore's rewrite substitutes for it when it builds code for
// exploration. It has sync/atomic's API, every function, type and method,
// so a file whose import of "sync/atomic" is changed to this package
// compiles unchanged.
//
// Every operation is a switch point of the interleaving explorer: before
// it runs, the installed scheduler (internal/seam/hooked) decides which
// thread goes next, and after it runs the scheduler is told what it did:
// the word (the address of the variable, or of the typed value), the kind
// of operation, and its values. The operation in between is sync/atomic's
// own.
//
// With no scheduler installed every operation is sync/atomic's own and
// nothing else, so rewritten code behaves exactly as before. Each type
// holds the sync/atomic type as its only field, so it has the same size
// and alignment (an Int64 is 64-bit aligned on 32-bit platforms too), and
// its zero value is ready to use.
//
// Go's atomic operations are sequentially consistent, so running them one
// at a time in every order the explorer picks covers every behavior they
// can have. Plain (non-atomic) memory is not a switch point: a data race
// on it is left to the race detector.
package atomic

//go:generate go run gen.go
