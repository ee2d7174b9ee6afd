package explore_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
)

// pipe is a counter handed from a goroutine to its caller over a channel,
// written as the rewrite writes code: every shared access reported
// (rt.PlainLoad, rt.PlainWrite), every go statement, send and receive
// through rt.
type pipe struct {
	n       int
	handoff bool // the caller waits for the worker's send before it reads n
}

// Run starts a worker that adds one to n and says so on an unbuffered
// channel, then adds one itself and reads n.
func (p *pipe) Run() int {
	ch := make(chan int)
	rt.Go("pipe.go:1", func() {
		*rt.PlainWrite(rt.PlainLoad(&p.n)) += 1
		rt.Send(ch)(1)
	})
	if p.handoff {
		rt.Recv(ch)
	}
	*rt.PlainWrite(rt.PlainLoad(&p.n)) += 1
	n := *rt.PlainLoad(&p.n)
	if !p.handoff {
		rt.Recv(ch)
	}
	return n
}

func pipeSpec(handoff bool) explore.Spec[*pipe, string, int, int] {
	return explore.Spec[*pipe, string, int, int]{
		New:     func() *pipe { return &pipe{handoff: handoff} },
		Threads: [][]string{{"run"}},
		Call:    func(p *pipe, _ string) int { return p.Run() },
		Step:    func(n int, _ time.Time, _ string) (int, int) { return n + 2, n + 2 },
		Twins:   true,
	}
}

func TestGoroutineHandoff(t *testing.T) {
	r := explore.Explore(pipeSpec(true), explore.Options{}, "")
	if r.Failure != nil || r.Err != nil || !r.Exhaustive {
		t.Fatalf("the handoff fails: %s\n%v", r.Summary(), r.Failure)
	}
	t.Log(r.Summary())
	r = explore.Explore(pipeSpec(false), explore.Options{}, "")
	if r.Failure == nil || !strings.Contains(r.Failure.Kind, "race") {
		t.Fatalf("want a data race without the handoff: %s", r.Summary())
	}
	t.Log(r.Failure.Report)
}
