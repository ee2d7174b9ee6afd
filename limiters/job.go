package limiters

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/shard"
)

// An Outcome is how a run of `tollgate limiters` that ran to its end came
// out. A violation that a reading of known library behaviour explains
// (Classify) or an -expect verdict names is one of the campaign's results;
// any other violation, and any -expect verdict that did not come out,
// fails it (Unexplained, Mismatches).
type Outcome int

const (
	// Pass: every -expect verdict came out; a replay reproduced its
	// violation.
	Pass Outcome = iota
	// Fail: some -expect verdict did not come out, or a violation nothing
	// explains came out; a replay's violation did not reproduce.
	Fail
)

// Exit codes of tollgate limiters.
const (
	ExitOK     = 0
	ExitFailed = 1 // an Outcome of Fail, or a campaign that could not run to its end
	ExitUsage  = 2 // a bad flag, or a counterexample that could not be replayed
)

// ExitCode is the exit code of a run that returned o and err: ExitUsage for
// an error of its input (Resolve's, or a replay's), ExitFailed for any other
// error or for Fail, ExitOK for Pass.
func ExitCode(o Outcome, err error) int {
	var in inputError
	switch {
	case errors.As(err, &in):
		return ExitUsage
	case err != nil, o != Pass:
		return ExitFailed
	}
	return ExitOK
}

func (o Outcome) String() string {
	switch o {
	case Pass:
		return "Pass"
	case Fail:
		return "Fail"
	}
	return "Outcome(?)"
}

// buildDir is where the generated per-version modules are built, kept from
// run to run so that the go command's cache serves a version built before.
func buildDir() string { return filepath.Join(os.TempDir(), "tollgate-limiters-build") }

// Run runs the campaign c describes (Resolve is applied first), or with
// c.Replay the replay of one counterexample. It writes the per-version
// progress and the expectations that did not come out to log; the report
// (the summary by version, with c.Table every check, each violation with
// its shrunk calls and the command that replays it) to stdout; and the
// results to c.Out: results.json, results.md, and next to each
// counterexample in cex/ its plot. The error is a run that could not go to
// its end; ExitCode maps it with the Outcome to the command's exit code.
func Run(c Config, stdout, log io.Writer) (Outcome, error) {
	c, err := c.Resolve()
	if err != nil {
		return Fail, err
	}
	if c.Replay != "" {
		return replayOne(c, stdout)
	}
	if c.NeedsRedis() && c.RedisAddr == "" {
		return Fail, errors.New("limiters: a library of -libs runs on a redis-server: RedisAddr must name one")
	}
	want, _ := ParseExpect(c.Expect)
	dir := c.Out
	if dir == "" {
		if dir, err = os.MkdirTemp("", "tollgate-limiters-"); err != nil {
			return Fail, err
		}
	}
	// The children run in this directory, so a relative -out gives
	// counterexamples (and replay commands) relative to it.
	p := c.plan(buildDir(), filepath.Join(dir, "cex"))
	start := time.Now()
	rs, ran, err := p.Run(log)
	elapsed := time.Since(start)
	if err != nil {
		return Fail, err
	}
	if err := writeResults(dir, rs, elapsed, c.Seed, p.Shard); err != nil {
		return Fail, err
	}
	report(stdout, rs, c.Table, elapsed, dir)
	out := Pass
	for _, b := range Mismatches(want, rs, ran, p.Shard) {
		fmt.Fprintln(log, "tollgate limiters: expected", b)
		out = Fail
	}
	for _, u := range Unexplained(want, rs, ran) {
		fmt.Fprintln(log, "tollgate limiters: a violation no reading explains (limiters/known.go) and no -expect names:", u)
		out = Fail
	}
	return out, nil
}

// replayOne replays the counterexample c.Replay on the version it names
// and prints the verdict.
func replayOne(c Config, stdout io.Writer) (Outcome, error) {
	var env []string
	if c.RedisAddr != "" {
		env = append(env, "TOLLGATE_REDIS_ADDR="+c.RedisAddr)
	}
	r, err := Replay(c.Repo, buildDir(), c.Replay, env)
	if err != nil {
		return Fail, inputError{err}
	}
	fmt.Fprintf(stdout, "%s %s@%s %s %s: %s\n", r.Verdict, r.Library, r.Version, r.Workload, r.Prop, r.Detail)
	if r.Verdict != Violated {
		return Fail, nil
	}
	return Pass, nil
}

// report writes the summary by version (with table, every check first),
// each violation with its counterexample and replay command, and a closing
// count.
func report(w io.Writer, rs []Result, table bool, elapsed time.Duration, dir string) {
	if table {
		Table(w, rs)
		fmt.Fprintln(w)
	}
	Summary(w, rs)
	fmt.Fprintln(w)
	violations := 0
	for _, r := range rs {
		if r.Verdict != Violated {
			continue
		}
		violations++
		fmt.Fprintf(w, "VIOLATED %s@%s %s %s: %s\n", r.Library, r.Version, r.Workload, r.Prop, r.Detail)
		if c, err := ReadCex(r.Cex); err == nil {
			if len(c.Steps) > 0 {
				fmt.Fprintf(w, "  shrunk to %d steps (from %d): %s\n%s", len(c.Steps), c.Original, c.Finding.Detail, DescribeSteps(c, 12))
			} else {
				fmt.Fprintf(w, "  kept: the worst window's %d calls as recorded on the real clock (a schedule cannot be re-run or shrunk)\n", len(c.Events))
			}
		}
		fmt.Fprintf(w, "  replay: %s\n", r.Replay)
	}
	fmt.Fprintf(w, "\n%d checks, %d violated, %s; table: %s\n", len(rs), violations, elapsed.Round(time.Second), filepath.Join(dir, "results.md"))
}

// writeResults writes the results of a campaign (of shard sh of it) that
// took elapsed with seed into dir: results.json, every result as JSON, and
// results.md, the summary by version, every check, and each
// counterexample with its replay command and the plot it draws next to
// its file.
func writeResults(dir string, rs []Result, elapsed time.Duration, seed uint64, sh shard.Shard) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rs, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "results.md"))
	if err != nil {
		return err
	}
	defer f.Close()
	host, _ := os.Hostname()
	cmd := "tollgate limiters"
	if !sh.Whole() {
		cmd += " -shard " + sh.String()
	}
	fmt.Fprintf(f, "# Limiter campaign results\n\n`%s`, %s, seed %d, %s, %d CPUs, %s/%s, %s; %s.\n\n",
		cmd, time.Now().UTC().Format("2006-01-02 15:04 MST"), seed, runtime.Version(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, host, elapsed.Round(time.Second))
	fmt.Fprintln(f, "## Summary")
	fmt.Fprintln(f)
	Summary(f, rs)
	fmt.Fprintln(f, "\n## Every check")
	fmt.Fprintln(f)
	Table(f, rs)
	fmt.Fprintln(f, "\n## Counterexamples")
	fmt.Fprintln(f)
	for _, r := range rs {
		if r.Verdict != Violated || !strings.HasSuffix(r.Cex, ".json") {
			continue
		}
		c, err := ReadCex(r.Cex)
		if err != nil {
			return err
		}
		png := strings.TrimSuffix(r.Cex, ".json") + ".png"
		if err := Plot(c, png); err != nil {
			fmt.Fprintf(f, "- (no plot: %v)\n", err)
		}
		how := fmt.Sprintf("%d steps (shrunk from %d)", len(c.Steps), c.Original)
		if len(c.Steps) == 0 {
			how = fmt.Sprintf("the worst window's %d calls as recorded on the real clock (the replay re-checks them)", len(c.Events))
		}
		fmt.Fprintf(f, "- %s %s, %s, %s: %s; %s. Replay: `%s`. Plot: [`cex/%s`](cex/%s)\n",
			Short(r.Library), r.Version, r.Workload, r.Prop, c.Finding.Detail, how, r.Replay, filepath.Base(png), filepath.Base(png))
	}
	return nil
}
