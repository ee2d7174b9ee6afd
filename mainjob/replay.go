package mainjob

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/tollgate/tollgate/linearizability"
)

// Replay checks a history file written by an earlier run again, with
// porcupine's budget timeout, and returns its verdict. The check of a
// recorded history is deterministic, so this reproduces a verdict exactly;
// its visualization is written beside the file as <name>-replay.html.
func Replay(path string, timeout time.Duration, w io.Writer) (Verdict, error) {
	saved, err := linearizability.LoadHistory(path)
	if err != nil {
		return Illegal, fmt.Errorf("check: %w", err)
	}
	base := strings.TrimSuffix(filepath.Base(path), ".json")
	opt := linearizability.Options{Timeout: timeout, Dir: filepath.Dir(path), Name: base + "-replay"}
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
	if rep.HTMLPath != "" {
		fmt.Fprintf(w, "  visualization: %s\n", rep.HTMLPath)
	}
	return verdictOf(rep.Result), nil
}
