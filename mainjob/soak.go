package mainjob

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tollgate/tollgate/backends/etcdcheck"
	"github.com/tollgate/tollgate/backends/faultrun"
	"github.com/tollgate/tollgate/backends/redischeck"
)

// A soak (Config.Soak) runs windows drawn from the seed one after another
// until its duration has passed: each window one recording of one
// primitive, on servers of its own, through one fault or two overlapping
// (faultrun.Draw; the faults are the wing's SoakAtoms), checked as a fault
// table's row is: porcupine, durability by identity, writes applied twice,
// the faults' strikes on writes in flight, and, on a cluster, the table
// answering again. The plan is the seed's alone: window i of seed S is
// the same on any machine (`-soak-plan N` prints the first N), and
// `-soak-window i` runs it again by itself.

// soakWing is a backend's part of a soak.
type soakWing struct {
	atoms []faultrun.Atom
	run   func(w faultrun.Window) (faultrun.Row, error)
}

func (c Config) soakWing() soakWing {
	o := faultrun.Options{Timeout: c.CallTimeout, CheckTimeout: c.Timeout, Fault: c.fault(), Dir: c.Out}
	switch c.Backend {
	case "etcd":
		o.Timeout = 0 // the wing's own, longer than an election
		return soakWing{etcdcheck.SoakAtoms(), func(w faultrun.Window) (faultrun.Row, error) { return etcdcheck.RunWindow(w, o) }}
	default:
		cluster := c.Backend == "redis-cluster"
		return soakWing{redischeck.SoakAtoms(cluster), func(w faultrun.Window) (faultrun.Row, error) { return redischeck.RunWindow(w, cluster, o) }}
	}
}

// soakWindow is c's window i.
func (c Config) soakWindow(i int) faultrun.Window {
	return faultrun.Draw(c.Seed, i, c.primitives(), c.soakWing().atoms)
}

// SoakPlan writes the first n windows of c's soak: what the seed draws.
func SoakPlan(c Config, n int, w io.Writer) error {
	c, err := c.Resolve()
	if err != nil {
		return err
	}
	if err := c.checkSoak(); err != nil {
		return err
	}
	fmt.Fprintf(w, "soak plan of -backend %s, seed %d (primitives %s):\n", c.Backend, c.Seed, strings.Join(c.primitives(), ", "))
	for i := range n {
		fmt.Fprintln(w, "  "+c.soakWindow(i).String())
	}
	return nil
}

func (c Config) checkSoak() error {
	if !c.remote() {
		return fmt.Errorf("check: -soak needs -backend redis, redis-cluster or etcd, not %s", c.Backend)
	}
	return nil
}

// soakRow is one window's line of the soak's table.
type soakRow struct {
	w   faultrun.Window
	r   faultrun.Row
	err error
}

func (s soakRow) result() string {
	switch {
	case s.err != nil:
		return "NOT RUN: " + s.err.Error()
	case s.r.Pass():
		return "Ok"
	case s.r.Inconclusive():
		return "Unknown (porcupine undecided)"
	}
	return "FAILED: " + s.r.Failure()
}

// Soak runs c's soak: the windows of c.Seed for c.Soak (at least one), or
// with c.SoakWindow >= 0 that window alone, writing each window's plan
// and row as it goes and the table at the end, to w and to the file
// c.SoakResults ("" for none).
func Soak(c Config, out io.Writer) (Verdict, error) {
	c, err := c.Resolve()
	if err != nil {
		return Illegal, err
	}
	if err := c.checkSoak(); err != nil {
		return Illegal, err
	}
	w := out
	if c.SoakResults != "" {
		if err := os.MkdirAll(filepath.Dir(c.SoakResults), 0o755); err != nil {
			return Illegal, fmt.Errorf("check: -soak-results: %w", err)
		}
		f, err := os.Create(c.SoakResults)
		if err != nil {
			return Illegal, fmt.Errorf("check: -soak-results: %w", err)
		}
		defer f.Close()
		w = io.MultiWriter(out, f)
	}
	wing := c.soakWing()
	target := "the real implementations"
	if c.Mutant != "" {
		target = "mutant " + c.Mutant
	}
	fmt.Fprintf(w, "tollgate check -soak: %s on -backend %s, seed %d, %v, call timeout %v, porcupine timeout %v per window\n",
		target, c.Backend, c.Seed, c.Soak, c.CallTimeout, c.Timeout)
	var names []string
	for _, a := range wing.atoms {
		names = append(names, a.Name)
	}
	fmt.Fprintf(w, "faults drawn from: %s (two overlapping in about %.0f%% of the windows)\n", strings.Join(names, ", "), 100*faultrun.PairChance(wing.atoms))
	start := time.Now()
	var rows []soakRow
	v := Ok
	for i := 0; ; i++ {
		idx := i
		if c.SoakWindow >= 0 {
			if i > 0 {
				break
			}
			idx = c.SoakWindow
		} else if i > 0 && time.Since(start) >= c.Soak {
			break
		}
		win := faultrun.Draw(c.Seed, idx, c.primitives(), wing.atoms)
		fmt.Fprintf(w, "plan: %s\n", win)
		r, err := runTries(wing.run, win, w)
		s := soakRow{w: win, r: r, err: err}
		rows = append(rows, s)
		switch {
		case err != nil:
			// The harness could not do or undo a fault (a member that did
			// not start in time, say): no promise was seen broken, and
			// none was checked. Not a pass.
			v = v.Merge(Unknown)
		case r.Pass():
		case r.Inconclusive():
			v = v.Merge(Unknown)
		default:
			v = Illegal
		}
		fmt.Fprintf(w, "  -> %s; operations %d, unknown %d; %s (%v)\n", s.result(), r.Ops, r.UnknownOps, r.Detail, r.Elapsed.Round(time.Millisecond))
		if err == nil && !r.Pass() && r.Report.JSONPath != "" {
			fmt.Fprintf(w, "     history: %s\n", r.Report.JSONPath)
		}
	}
	printSoak(w, c, rows, time.Since(start))
	fmt.Fprintf(w, "result: %s\n", soakLine(v, rows))
	return v, nil
}

// runTries runs window win with run, and runs it again, on fresh servers,
// up to faultrun.StrikeTries times in all while a try checked nothing of
// what the fault does to a write: the fault found no write in flight and
// nothing else is wrong (faultrun.OnlyMissedWrites), or the harness could
// not do or undo the fault (NOT RUN: a server that did not fail over in
// time on a loaded machine, say). Each try again is written to w; the last
// try's row and error are the window's. A try that found a violation is
// never run again.
func runTries(run func(faultrun.Window) (faultrun.Row, error), win faultrun.Window, w io.Writer) (faultrun.Row, error) {
	r, err := run(win)
	for try := 2; try <= faultrun.StrikeTries; try++ {
		switch {
		case err != nil:
			fmt.Fprintf(w, "  -> NOT RUN: %v: run again (try %d of %d)\n", err, try, faultrun.StrikeTries)
		case faultrun.OnlyMissedWrites(r):
			fmt.Fprintf(w, "  -> the fault found no write in flight; operations %d, nothing lost or applied twice: injected again (try %d of %d)\n", r.Ops, try, faultrun.StrikeTries)
		default:
			return r, nil
		}
		r, err = run(win)
	}
	return r, err
}

func printSoak(w io.Writer, c Config, rows []soakRow, took time.Duration) {
	fmt.Fprintf(w, "\nsoak of -backend %s, seed %d: %d windows in %v\n", c.Backend, c.Seed, len(rows), took.Round(time.Second))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "window\tprimitive\tfaults\toperations\tunknown\tacknowledged\tlost\tapplied twice\tin flight\tresult\t")
	pairs, failed := 0, 0
	for _, s := range rows {
		var fs []string
		for i, st := range s.w.Steps {
			if i == 0 {
				fs = append(fs, fmt.Sprintf("%s@%.0f%%/%v", st.Fault, 100*st.Share, st.Hold))
			} else {
				fs = append(fs, fmt.Sprintf("+%v %s/%v", st.After, st.Fault, st.Hold))
			}
		}
		if len(s.w.Steps) > 1 {
			pairs++
		}
		res := s.result()
		if res != "Ok" {
			failed++
		}
		if len(res) > 60 {
			res = res[:57] + "..."
		}
		res = strings.ReplaceAll(res, "\n", " ")
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", s.w.Index, s.w.Primitive, strings.Join(fs, " "), s.r.Ops, s.r.UnknownOps, s.r.Acked, s.r.Lost, s.r.Extra, s.r.InFlight, res)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d windows, %d of them with two overlapping faults; %d not Ok\n", len(rows), pairs, failed)
	if c.SoakWindow < 0 {
		fmt.Fprintf(w, "one window again: go run ./cmd/tollgate check -backend %s -seed %d -soak-window N\n", c.Backend, c.Seed)
	}
}

func soakLine(v Verdict, rows []soakRow) string {
	switch v {
	case Ok:
		return fmt.Sprintf("Ok — every one of %d windows linearizable, no acknowledged write lost or applied twice, every fault struck a write in flight", len(rows))
	case Unknown:
		return "Unknown — no violation found, but some windows could not be run (NOT RUN: the harness could not do or undo a fault) or checked in time (not a pass)"
	}
	return "FAILED"
}
