package counter

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// singleflightTooth is a hand-written concurrency bug for a copy of
// golang.org/x/sync/singleflight: doCall sends the results to the waiting
// channels before the call leaves the group's map, and outside the lock.
// A DoChan in between joins a call whose results are already sent.
var singleflightTooth = struct{ old, new string }{
	old: `		g.mu.Lock()
		defer g.mu.Unlock()
		c.wg.Done()
		if g.m[key] == c {
			delete(g.m, key)
		}
`,
	new: `		g.mu.Lock()
		c.wg.Done()
		g.mu.Unlock()
		defer func() { // tooth: the results go out before the call leaves the map
			g.mu.Lock()
			if g.m[key] == c {
				delete(g.m, key)
			}
			g.mu.Unlock()
		}()
`,
}

// toothTest is the test of the patched copy: TestSingleflightDoChan's
// scenario, which must fail.
const toothTest = `package singleflight

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
)

type flight struct {
	g     Group
	execs atomic.Int64
}

func TestTooth(t *testing.T) {
	if !rt.IsRewritten("example.com/tooth/singleflight") {
		t.Fatal("not rewritten")
	}
	spec := explore.Spec[*flight, string, int, struct{}]{
		New:     func() *flight { return new(flight) },
		Threads: [][]string{{"k", "k"}, {"k"}},
		After:   []string{"execs"},
		Call: func(f *flight, op string) int {
			if op == "execs" {
				return int(f.execs.Load())
			}
			ch := f.g.DoChan(op, func() (any, error) { return int(f.execs.Add(1)), nil })
			return rt.Recv(ch).Val.(int)
		},
		Model: &porcupine.Model{
			Init: func() any { return 0 },
			Step: func(st, in, out any) (bool, any) {
				s, v := st.(int), out.(int)
				if in.(string) == "execs" {
					return v == s, s
				}
				return v == s+1 || v == s && s > 0, v
			},
			DescribeOperation: func(in, out any) string { return fmt.Sprintf("%s → %v", in, out) },
		},
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil {
		t.Fatalf("TOOTH NOT FOUND: %s", r.Summary())
	}
	_, again, err := explore.Replay(spec, r.Failure.Schedule, "")
	if err != nil || again == nil || again.Kind != r.Failure.Kind {
		t.Fatalf("replay of %s: %v, %v", r.Failure.Schedule, again, err)
	}
	t.Logf("TOOTH FOUND (%s, replayed):\n%s", r.Failure.Kind, r.Failure.Report)
}
`

// errgroupTooth is a hand-written concurrency bug for a copy of
// golang.org/x/sync/errgroup: Go counts its goroutine in the group's
// WaitGroup from the goroutine, after Go has returned, so a Wait right
// after Go may return before the function ran.
var errgroupTooth = struct{ old, new string }{
	old: "\tg.wg.Add(1)\n\tgo func() {\n\t\tdefer g.done()\n",
	new: "\tgo func() {\n\t\tg.wg.Add(1) // tooth: counted by the goroutine, after Go returned\n\t\tdefer g.done()\n",
}

// errgroupToothTest is TestErrgroupLimit's scenario for the patched copy.
const errgroupToothTest = `package errgroup

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
)

type group struct {
	g   Group
	ran atomic.Int64
}

func TestTooth(t *testing.T) {
	if !rt.IsRewritten("example.com/tooth/errgroup") {
		t.Fatal("not rewritten")
	}
	spec := explore.Spec[*group, string, int, int]{
		New: func() *group {
			g := new(group)
			g.g.SetLimit(1)
			return g
		},
		Threads: [][]string{{"go", "wait"}, {"go"}},
		Call: func(g *group, op string) int {
			if op == "wait" {
				if err := g.g.Wait(); err != nil {
					return -1
				}
				return int(g.ran.Load())
			}
			g.g.Go(func() error { g.ran.Add(1); return nil })
			return 0
		},
		Step: func(started int, _ time.Time, op string) (int, int) {
			if op == "wait" {
				return started, started
			}
			return started + 1, 0
		},
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil {
		t.Fatalf("TOOTH NOT FOUND: %s", r.Summary())
	}
	_, again, err := explore.Replay(spec, r.Failure.Schedule, "")
	if err != nil || again == nil || again.Kind != r.Failure.Kind {
		t.Fatalf("replay of %s: %v, %v", r.Failure.Schedule, again, err)
	}
	t.Logf("TOOTH FOUND (%s, replayed):\n%s", r.Failure.Kind, r.Failure.Report)
}
`

// TestSingleflightToothFound copies singleflight from the module cache
// into a module of its own, puts the tooth in, and runs tollgate explore
// on it with TestSingleflightDoChan's scenario, which must find it. (The
// copy is made at test time; nothing of x/sync is committed here.)
func TestSingleflightToothFound(t *testing.T) {
	toothFound(t, "singleflight", "singleflight.go", singleflightTooth.old, singleflightTooth.new, toothTest)
}

// TestErrgroupToothFound: the same for errgroup, with TestErrgroupLimit's
// scenario.
func TestErrgroupToothFound(t *testing.T) {
	toothFound(t, "errgroup", "errgroup.go", errgroupTooth.old, errgroupTooth.new, errgroupToothTest)
}

// toothFound copies package pkg of golang.org/x/sync from the module
// cache into a module of its own, replaces old by new in file (the
// tooth), adds test, and runs tollgate explore on it: the test must report
// the tooth found.
func toothFound(t *testing.T, pkg, file, old, new, test string) {
	toothFoundIn(t, "golang.org/x/sync", pkg, file, old, new, test)
}

// toothFoundIn is toothFound for package pkg of module mod.
func toothFoundIn(t *testing.T, module, pkg, file, old, new, test string) {
	if testing.Short() {
		t.Skip("builds tollgate and explores a patched copy of " + module)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "TMPDIR="+tmp)
	run := func(dir string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	bin := filepath.Join(tmp, "tollgate")
	run(root, "go", "build", "-o", bin, "./cmd/tollgate")
	xsync := strings.TrimSpace(run(".", "go", "list", "-m", "-f", "{{.Dir}}", module))
	src, err := os.ReadFile(filepath.Join(xsync, pkg, file))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), old) {
		t.Fatalf("the tooth does not apply to %s/%s/%s: the code changed", xsync, pkg, file)
	}
	patched := strings.Replace(string(src), old, new, 1)
	mod := filepath.Join(tmp, "mod")
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod":               "module example.com/tooth\n\ngo 1.26.8\n\nrequire (\n\tgithub.com/anishathalye/porcupine v1.3.1\n\tgithub.com/tollgate/tollgate v0.0.0\n)\n\nreplace github.com/tollgate/tollgate => " + root + "\n",
		"go.sum":               string(sum),
		pkg + "/" + file:       patched,
		pkg + "/tooth_test.go": test,
	}
	for name, text := range files {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	out := run(mod, bin, "explore", "-pkg", "./"+pkg, "-dir", filepath.Join(tmp, "out"), "-v")
	if !strings.Contains(out, "TOOTH FOUND") {
		t.Fatalf("the tooth was not found:\n%s", out)
	}
	t.Logf("%s", out)
}
