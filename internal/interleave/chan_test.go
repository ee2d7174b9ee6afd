package interleave

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// The controller's goroutines and channels (chan.go), driven as explore/rt
// drives them.

func ctl() *controller { return hooked.Current().(*controller) }

func chanWord(ch chan int) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&ch)) }

func send(ch chan int, v int) {
	if !ctl().ChanSend(chanWord(ch), cap(ch), v) {
		panic("send on closed channel")
	}
}

func recv(ch chan int) (int, bool) {
	v, ok := ctl().ChanRecv(chanWord(ch), cap(ch))
	n, _ := v.(int)
	return n, ok
}

// sel is a select over receives from rs and sends of 10+i to ss.
func sel(rs []chan int, ss []chan int, hasDefault bool) string {
	var chans []unsafe.Pointer
	var caps []int
	var sends []bool
	var vals []any
	for _, c := range rs {
		chans, caps, sends, vals = append(chans, chanWord(c)), append(caps, cap(c)), append(sends, false), append(vals, nil)
	}
	for i, c := range ss {
		chans, caps, sends, vals = append(chans, chanWord(c)), append(caps, cap(c)), append(sends, true), append(vals, 10+i)
	}
	k, v, ok := ctl().Select(chans, caps, sends, vals, hasDefault, "t.go:1")
	switch {
	case k < 0:
		return "default"
	case k >= len(rs):
		return fmt.Sprintf("sent%d", k-len(rs))
	}
	return fmt.Sprintf("got%d=%v,%v", k, v, ok)
}

// chanProgram is a program of threads over channels made by mk, whose
// outcome is what each thread logged.
type chanProgram struct {
	name string
	mk   func() []chan int
	body [][]func(cs []chan int, log func(string))
	mu   sync.Mutex
	logs [][]string
}

func (p *chanProgram) ops() *Ops {
	return &Ops{
		Name: p.name, Threads: len(p.body),
		Begin: func() [][]func() {
			cs := p.mk()
			p.logs = make([][]string, len(p.body)+1)
			var out [][]func()
			for t, ops := range p.body {
				var list []func()
				for _, op := range ops {
					list = append(list, func() {
						op(cs, func(s string) {
							p.mu.Lock()
							defer p.mu.Unlock()
							p.logs[t] = append(p.logs[t], s)
						})
					})
				}
				out = append(out, list)
			}
			return out
		},
		End:     func([][][2]int64, string) (Kind, string, []string) { return "", "", nil },
		Outcome: func() string { return fmt.Sprint(p.logs) },
	}
}

func chanPrograms() []*chanProgram {
	logRecv := func(c chan int, log func(string)) { v, ok := recv(c); log(fmt.Sprint(v, ok)) }
	return []*chanProgram{
		{name: "buffered", mk: func() []chan int { return []chan int{make(chan int, 1)} },
			body: [][]func([]chan int, func(string)){
				{func(c []chan int, _ func(string)) { send(c[0], 1); send(c[0], 2) }},
				{func(c []chan int, log func(string)) { logRecv(c[0], log) }},
				{func(c []chan int, log func(string)) { logRecv(c[0], log) }},
			}},
		{name: "select-two-senders", mk: func() []chan int { return []chan int{make(chan int, 1), make(chan int)} },
			body: [][]func([]chan int, func(string)){
				{func(c []chan int, log func(string)) { log(sel(c, nil, false)); log(sel(c, nil, false)) }},
				{func(c []chan int, _ func(string)) { send(c[0], 1) }},
				{func(c []chan int, _ func(string)) { send(c[1], 2) }},
			}},
		{name: "select-waits-on-two", mk: func() []chan int { return []chan int{make(chan int, 1), make(chan int, 1)} },
			body: [][]func([]chan int, func(string)){
				{func(c []chan int, log func(string)) { log(sel(c, nil, false)) }},
				{func(c []chan int, _ func(string)) { send(c[0], 1) }},
				{func(c []chan int, _ func(string)) { send(c[1], 2) }},
			}},
		{name: "close-vs-select", mk: func() []chan int { return []chan int{make(chan int), make(chan int)} },
			body: [][]func([]chan int, func(string)){
				{func(c []chan int, log func(string)) { log(sel(c[1:], c[:1], false)) }},
				{func(c []chan int, _ func(string)) { ctl().ChanClose(chanWord(c[1]), 0) }},
				{func(c []chan int, log func(string)) { log(sel(c[:1], nil, true)) }},
			}},
		{name: "goroutine-handoff", mk: func() []chan int { return []chan int{make(chan int), make(chan int, 1)} },
			body: [][]func([]chan int, func(string)){
				{func(c []chan int, log func(string)) {
					if why := ctl().Go(func() { send(c[1], 8); send(c[0], 7) }, "t.go:2"); why != "" {
						panic(why)
					}
					logRecv(c[0], log)
				}},
				{func(c []chan int, log func(string)) { log(sel(c[1:], nil, true)); log(sel(c[1:], nil, true)) }},
			}},
	}
}

// TestChannelReductionLosesNothing: on programs of channels, selects and
// goroutines, DFS with the sleep sets reaches every outcome it reaches
// without them, and finds more than one (the programs have choices).
func TestChannelReductionLosesNothing(t *testing.T) {
	for _, cp := range chanPrograms() {
		t.Run(cp.name, func(t *testing.T) {
			on, nOn, err := outcomes(&opsProgram{o: cp.ops()}, 6, true)
			if err != nil {
				t.Fatal(err)
			}
			off, nOff, err := outcomes(&opsProgram{o: cp.ops()}, 6, false)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(on, off) {
				t.Errorf("outcomes with the reduction (%d runs):\n%s\nwithout (%d runs):\n%s", nOn, keys(on), nOff, keys(off))
			}
			if len(off) < 2 {
				t.Errorf("one outcome only: %s", keys(off))
			}
			t.Logf("%d outcomes, %d runs reduced, %d not", len(on), nOn, nOff)
		})
	}
}

func keys(m map[string]bool) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), "\n")
}
