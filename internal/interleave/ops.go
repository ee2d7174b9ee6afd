package interleave

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// Ops is a program given as functions, for code that is not the tables:
// the public package github.com/tollgate/tollgate/explore builds one from a
// user's Spec over code rewritten for exploration. The controller, the
// strategies, the reduction and the traces are the ones the catalogue's
// scenarios run on.
type Ops struct {
	// Name names the program in failures.
	Name string
	// Threads is the number of threads.
	Threads int
	// Begin builds a fresh instance of the code under test (it runs with
	// no switch points) and returns every thread's operations, each run as
	// one operation of the history, in order.
	Begin func() [][]func()
	// Check, when set, is called after every step with every thread
	// paused; a non-empty answer ends the run as an invariant failure.
	Check func() string
	// End checks a complete run. at[t][i] holds the history times of the
	// call and the return of thread t's operation i (a call before a
	// return of the same step; the end's own observations come after all
	// of them). dir, when not empty, is where a failure writes its files
	// (a visualization); it returns their paths. End returns an empty kind
	// when the run passes.
	End func(at [][][2]int64, dir string) (kind Kind, detail string, files []string)
	// Outcome, when set, is a summary of a complete run's answers (for
	// comparing searches).
	Outcome func() string
	// Call and Ret render thread t's operation i and its answer in traces.
	Call, Ret func(t, i int) string
	// Site renders the code under test that made an operation (file:line
	// and its source), from the Access's Site; nil: nothing.
	Site func(pc uintptr) string
	// Replay is the command that replays a schedule, with %s where the
	// schedule goes (it is in every failure's report).
	Replay string
	// Names, when set, names threads in traces (an empty name: none).
	Names []string
}

// opsProgram runs an Ops.
type opsProgram struct {
	o   *Ops
	at  [][][2]int64
	dir string
}

func (p *opsProgram) threads() int { return p.o.Threads }

func (p *opsProgram) begin(c *controller) []func() {
	ops := p.o.Begin()
	if len(ops) != p.o.Threads {
		panic(fmt.Sprintf("explore: %s: Begin returned %d threads, want %d", p.o.Name, len(ops), p.o.Threads))
	}
	if len(p.at) != len(ops) {
		p.at = make([][][2]int64, len(ops))
	}
	bodies := make([]func(), len(ops))
	for t, list := range ops {
		p.at[t] = p.at[t][:0]
		bodies[t] = func() {
			for _, op := range list {
				call, ret := c.operation(liveNone, op)
				p.at[t] = append(p.at[t], [2]int64{call, ret})
			}
		}
	}
	return bodies
}

func (p *opsProgram) checkStep(c *controller) string {
	if p.o.Check == nil {
		return ""
	}
	var msg string
	c.quietDirect(func() { msg = p.o.Check() })
	return msg
}

func (p *opsProgram) end(c *controller, outcome bool) (*Failure, string) {
	var f *Failure
	if kind, detail, files := p.o.End(p.at, p.dir); kind != "" {
		f = &Failure{Kind: kind, Thread: -1, Detail: detail}
		for _, path := range files {
			switch {
			case strings.HasSuffix(path, ".html"):
				f.HTMLPath = path
			case strings.HasSuffix(path, ".json"):
				f.JSONPath = path
			}
		}
	}
	if !outcome || p.o.Outcome == nil {
		return f, ""
	}
	return f, p.o.Outcome()
}

func (p *opsProgram) writeFiles(dir, _ string) { p.dir = dir }

func (p *opsProgram) tracer() tracer { return opsTracer{p} }

// opsTracer names words by address (the code is not the tables: nothing
// here knows its layout) and adds the line of the code under test that
// made each operation.
type opsTracer struct{ p *opsProgram }

func (opsTracer) observe(*controller, *stepRec)        {}
func (opsTracer) word(a unsafe.Pointer) string         { return fmt.Sprintf("%p", a) }
func (opsTracer) value(_ unsafe.Pointer, v any) string { return fmt.Sprint(v) }
func (t opsTracer) call(th, op int) string {
	if t.p.o.Call == nil {
		return fmt.Sprintf("op%d", op)
	}
	return t.p.o.Call(th, op)
}
func (t opsTracer) ret(th, op int) string {
	if t.p.o.Ret == nil {
		return "done"
	}
	return t.p.o.Ret(th, op)
}
func (opsTracer) setup() []string { return nil }
func (t opsTracer) threadName(th int) string {
	if th < len(t.p.o.Names) {
		return t.p.o.Names[th]
	}
	return ""
}
func (t opsTracer) site(a hooked.Access) string {
	if a.Site == 0 || t.p.o.Site == nil {
		return ""
	}
	return t.p.o.Site(a.Site)
}

// ExploreOps explores p with opt (opt.Fault is ignored: the code under test
// is whatever p runs). One exploration runs at a time in a process.
func ExploreOps(p *Ops, opt Options) Result {
	r := exploreProgram(&opsProgram{o: p}, p.Name, opt)
	r.Mutant = ""
	if f := r.Failure; f != nil {
		f.Mutant, f.Replay = "", fmt.Sprintf(p.Replay, f.Schedule)
	}
	return r
}

// ReplayOps runs schedule once on p with tracing; dir, when not empty,
// receives a failing history's files.
func ReplayOps(p *Ops, schedule, dir string) (Replayed, error) {
	sched, err := ParseSchedule(schedule)
	if err != nil {
		return Replayed{}, err
	}
	prog := &opsProgram{o: p}
	c := newController(p.Threads)
	c.install()
	defer c.remove()
	defer c.close()
	r := replay(c, prog, sched, DefaultStepCap, dir, p.Name)
	out := Replayed{Schedule: encodeSchedule(r.schedule), Preemptions: r.preemptions, Trace: r.trace, Failure: r.failure, Outcome: r.outcome}
	if f := out.Failure; f != nil {
		f.Scenario, f.Schedule, f.Preemptions, f.Trace = p.Name, out.Schedule, out.Preemptions, out.Trace
		f.Strategy, f.Replay = "replay", fmt.Sprintf(p.Replay, out.Schedule)
	}
	return out, nil
}
