package mainjob

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tollgate/tollgate/linearizability"
)

// Replay checks a history file written by an earlier run again, with
// porcupine's budget timeout, and returns its verdict. The check of a
// recorded history is deterministic, so this reproduces a verdict exactly.
// It writes only what is new: for a history that is not linearizable (or
// not decided), the visualization of the replay's check, beside the file
// as <name>-replay.html, and it says where; never a copy of the history
// itself, which the check would write beside its visualization.
func Replay(path string, timeout time.Duration, w io.Writer) (Verdict, error) {
	saved, err := linearizability.LoadHistory(path)
	if err != nil {
		return Illegal, fmt.Errorf("check: %w", err)
	}
	base := strings.TrimSuffix(filepath.Base(path), ".json")
	dir := filepath.Dir(path)
	// The check writes its files into a directory of its own, on the same
	// file system as the history, from which only the visualization is
	// moved out.
	scratch, err := os.MkdirTemp(dir, ".replay-")
	if err != nil {
		return Illegal, fmt.Errorf("check: -replay: %w", err)
	}
	defer os.RemoveAll(scratch)
	opt := linearizability.Options{Timeout: timeout, Dir: scratch, Name: base + "-replay"}
	var rep linearizability.Report
	var seed uint64
	var mut string
	if saved.TokenBucket != nil {
		seed, mut = saved.TokenBucket.Seed, saved.TokenBucket.Mutant
		rep, err = linearizability.CheckTokenBucket(*saved.TokenBucket, opt)
	} else {
		seed, mut = saved.Credits.Seed, saved.Credits.Mutant
		rep, err = linearizability.CheckCredits(*saved.Credits, opt)
	}
	if err != nil {
		return Illegal, fmt.Errorf("check: %w", err)
	}
	if mut == "" {
		mut = "none (the real implementation)"
	}
	breaks := ""
	if rep.Invariant != "" {
		breaks = ", breaks " + rep.Invariant
	}
	fmt.Fprintf(w, "%s history %s (seed %d, mutant %s): %d operations (%d overlapping another), %s%s in %v\n",
		rep.Primitive, path, seed, mut, rep.Ops, rep.Overlapping, rep.Result, breaks, rep.CheckTime.Round(time.Millisecond))
	if rep.Detail != "" {
		fmt.Fprintln(w, " ", rep.Detail)
	}
	if rep.HTMLPath == "" {
		fmt.Fprintf(w, "  wrote nothing (a visualization is drawn only for a history that is not linearizable)\n")
		return verdictOf(rep.Result), nil
	}
	html := filepath.Join(dir, base+"-replay.html")
	if err := os.Rename(rep.HTMLPath, html); err != nil {
		return verdictOf(rep.Result), fmt.Errorf("check: -replay: %w", err)
	}
	fmt.Fprintf(w, "  visualization: %s (the only file written; the history stays %s)\n", html, path)
	return verdictOf(rep.Result), nil
}
