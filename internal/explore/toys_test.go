package explore

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// A toy is a small lock-free (or not) program on internal/seam/hooked for
// testing the controller without the tables.
type toy struct {
	name string
	n    int
	// build allocates the toy's words (in direct mode) and fills r.
	build func(c *controller, r *toyRun)
	cur   *toyRun
}

type toyRun struct {
	words   []unsafe.Pointer
	bodies  []func()
	outs    [][]string // every thread's outputs
	check   func() *Failure
	summary func() string
}

func (p *toy) threads() int { return p.n }

func (p *toy) begin(c *controller) ([]func(), wordIDs) {
	r := &toyRun{outs: make([][]string, p.n)}
	p.build(c, r)
	p.cur = r
	return r.bodies, addrIDs(r.words)
}

func (p *toy) end(c *controller, outcome bool) (*Failure, string) {
	var f *Failure
	if p.cur.check != nil {
		f = p.cur.check()
	}
	if !outcome {
		return f, ""
	}
	var b strings.Builder
	for t, o := range p.cur.outs {
		fmt.Fprintf(&b, "T%d%v ", t, o)
	}
	if p.cur.summary != nil {
		b.WriteString(p.cur.summary())
	}
	return f, b.String()
}

func (p *toy) tracer() tracer { return nil }

// counterToy: n threads each increment a shared counter incs times. With
// cas false an increment is a load then a store (a lost update); with cas
// true it is a compare-and-swap loop (correct).
func counterToy(n, incs int, cas bool) *toy {
	name := "load-store counter"
	if cas {
		name = "cas counter"
	}
	return &toy{name: name, n: n, build: func(c *controller, r *toyRun) {
		x := new(hooked.Pointer[int])
		zero := 0
		x.Store(&zero)
		r.words = []unsafe.Pointer{unsafe.Pointer(x)}
		for t := 0; t < n; t++ {
			r.bodies = append(r.bodies, func() {
				for k := 0; k < incs; k++ {
					c.operation(liveNone, func() {
						for {
							old := x.Load()
							v := *old + 1
							if !cas {
								x.Store(&v)
								r.outs[t] = append(r.outs[t], fmt.Sprint(v))
								return
							}
							if x.CompareAndSwap(old, &v) {
								r.outs[t] = append(r.outs[t], fmt.Sprint(v))
								return
							}
						}
					})
				}
			})
		}
		r.check = func() *Failure {
			if got := *x.Load(); got != n*incs {
				return &Failure{Kind: KindInvariant, Thread: -1, Detail: fmt.Sprintf("counter is %d after %d increments: lost update", got, n*incs)}
			}
			return nil
		}
		r.summary = func() string { return fmt.Sprint("x=", *x.Load()) }
	}}
}
