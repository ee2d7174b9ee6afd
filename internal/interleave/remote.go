package interleave

import (
	"fmt"
	"unsafe"

	"github.com/tollgate/tollgate/linearizability"
)

// Remote is a table behind a server, explored at the grain of its
// requests. The server applies each request (an etcd transaction, a Redis
// function call) atomically, so the steps of an operation are its
// requests, and a schedule decides which thread sends its next request;
// between two requests of one operation, any other thread may send any
// number of its own. The client reports every request through
// internal/seam/hooked (Before, then After with what it sent and what the
// server answered), as the hooked tables report every atomic operation;
// backends/etcdexplore wraps an etcd client so.
//
// Nothing else about the explorer changes: the same strategies, reduction
// (two requests conflict unless both only read), oracle (porcupine
// against model/, the final observations) and replayable schedules. What
// a request-grain exploration cannot see is what happens inside a request
// (the server's own concurrency, which its atomicity hides) and faults of
// the network (backends/etcdcheck injects those).
type Remote struct {
	// Name names the backend in reports ("etcd").
	Name string
	// TokenBucket returns the backend of a fresh, empty token-bucket table
	// for one run, of the explored fault's package (Options.Fault). Its
	// requests must be reported through internal/seam/hooked, each on one
	// word, the table's.
	TokenBucket func() (linearizability.TBBackend, error)
	// Credits is TokenBucket for the credit table (nil: the backend has
	// none to explore). Each run's snapshot is observed after every step
	// that may have written (spec/explore.md §7): a snapshot is one read
	// of the table at one revision.
	Credits func() (linearizability.CrBackend, error)
}

// remoteTracer renders a request-grain run: every request is a step on
// the table's one word, and its values are what the client reported.
type remoteTracer struct {
	tracer
	name string
}

func (t remoteTracer) observe(*controller, *stepRec) {}

func (t remoteTracer) word(unsafe.Pointer) string { return t.name }

func (t remoteTracer) value(_ unsafe.Pointer, v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}
