package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/tollgate/tollgate/internal/shard"
	"github.com/tollgate/tollgate/limiters"
	"github.com/tollgate/tollgate/redisserver"
)

func init() {
	register(command{name: "limiters", summary: "check x/time/rate, uber ratelimit and redis_rate, every released version, against spec/limiters.md", run: runLimiters})
}

func runLimiters(args []string) int {
	fs := flag.NewFlagSet("limiters", flag.ContinueOnError)
	libs := fs.String("libs", "golang.org/x/time,go.uber.org/ratelimit,github.com/go-redis/redis_rate/v10", "libraries (module paths), comma separated")
	versions := fs.String("versions", "", "versions per library, e.g. 'golang.org/x/time=v0.9.0+v0.16.0;go.uber.org/ratelimit=v0.3.1' (\"newest\" names the newest; default: every version the module proxy serves)")
	out := fs.String("out", "", "directory for results.md, results.json, counterexamples and plots (default: a new temporary directory)")
	seed := fs.Uint64("seed", 1, "seed of the concurrent workloads")
	quick := fs.Bool("quick", false, "smaller concurrent workloads")
	workload := fs.String("workload", "", "run only the workload of this name")
	replay := fs.String("replay", "", "replay one counterexample file and exit")
	expect := fs.String("expect", "", "verdicts that must come out, e.g. 'golang.org/x/time@v0.9.0:tiny-rate:L1=VIOLATED,golang.org/x/time@newest:tiny-rate:L1=holds'; exit 1 on a mismatch")
	table := fs.Bool("table", false, "also print every check (library, version, workload, property, seen / allowed, verdict), not only the summary by version")
	repo := fs.String("repo", "", "the tollgate checkout the generated modules build against (default: found from the working directory)")
	shardFlag := fs.String("shard", "", "check only shard `i/n` (1-based, e.g. 2/4) of the library versions, split by module@version: shards 1/n … n/n together check each version once (one CI runner each)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	root := *repo
	if root == "" {
		var err error
		if root, err = findRepo(); err != nil {
			fmt.Fprintln(os.Stderr, "tollgate limiters:", err)
			return 2
		}
	}
	work := filepath.Join(os.TempDir(), "tollgate-limiters-build")
	if *replay != "" {
		return replayCex(root, work, *replay)
	}
	plan := limiters.Plan{Repo: root, Work: work, Seed: *seed, Quick: *quick, Workload: *workload,
		Versions: map[string][]string{}, Replay: "go run ./cmd/tollgate limiters --replay"}
	var err error
	if plan.Shard, err = shard.Parse(*shardFlag); err != nil {
		fmt.Fprintln(os.Stderr, "tollgate limiters:", err)
		return 2
	}
	for _, m := range strings.Split(*libs, ",") {
		if m = strings.TrimSpace(m); m != "" {
			if _, err := limiters.TargetOf(m); err != nil {
				fmt.Fprintln(os.Stderr, "tollgate limiters: -libs:", err)
				return 2
			}
			plan.Modules = append(plan.Modules, m)
		}
	}
	if *versions != "" {
		for _, part := range strings.Split(*versions, ";") {
			m, vs, ok := strings.Cut(part, "=")
			if !ok || m == "" || vs == "" {
				fmt.Fprintf(os.Stderr, "tollgate limiters: -versions: %q must be MODULE=VERSION+VERSION…\n", part)
				return 2
			}
			plan.Versions[strings.TrimSpace(m)] = strings.Split(strings.TrimSpace(vs), "+")
		}
	}
	want, err := parseExpect(*expect)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tollgate limiters: -expect:", err)
		return 2
	}
	dir := *out
	if dir == "" {
		if dir, err = os.MkdirTemp("", "tollgate-limiters-"); err != nil {
			fmt.Fprintln(os.Stderr, "tollgate limiters:", err)
			return 1
		}
	}
	// The children run in this directory, so a relative -out gives
	// counterexamples (and replay commands) relative to it.
	plan.Dir = filepath.Join(dir, "cex")
	for _, m := range plan.Modules {
		t, _ := limiters.TargetOf(m)
		if !t.Redis {
			continue
		}
		srv, err := redisserver.Start(os.TempDir())
		if err != nil {
			fmt.Fprintln(os.Stderr, "tollgate limiters:", err)
			return 1
		}
		defer srv.Stop()
		stopOnSignal(srv)
		plan.Env = append(plan.Env, "TOLLGATE_REDIS_ADDR="+srv.Addr)
		break
	}
	start := time.Now()
	rs, err := limiters.Run(plan, os.Stderr)
	elapsed := time.Since(start)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tollgate limiters:", err)
		return 1
	}
	if err := writeLimiterResults(dir, rs, elapsed, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "tollgate limiters:", err)
		return 1
	}
	if *table {
		limiters.Table(os.Stdout, rs)
		fmt.Println()
	}
	limiters.Summary(os.Stdout, rs)
	fmt.Println()
	violations := 0
	for _, r := range rs {
		if r.Verdict == limiters.Violated {
			violations++
			fmt.Printf("VIOLATED %s@%s %s %s: %s\n", r.Library, r.Version, r.Workload, r.Prop, r.Detail)
			if c, err := limiters.ReadCex(r.Cex); err == nil {
				if len(c.Steps) > 0 {
					fmt.Printf("  shrunk to %d steps (from %d): %s\n%s", len(c.Steps), c.Original, c.Finding.Detail, limiters.DescribeSteps(c, 12))
				} else {
					fmt.Printf("  kept: the worst window's %d calls as recorded on the real clock (a schedule cannot be re-run or shrunk)\n", len(c.Events))
				}
			}
			fmt.Printf("  replay: %s\n", r.Replay)
		}
	}
	fmt.Printf("\n%d checks, %d violated, %s; table: %s\n", len(rs), violations, elapsed.Round(time.Second), filepath.Join(dir, "results.md"))
	if bad := checkExpect(want, rs); len(bad) > 0 {
		for _, b := range bad {
			fmt.Fprintln(os.Stderr, "tollgate limiters: expected", b)
		}
		return 1
	}
	return 0
}

func replayCex(root, work, path string) int {
	var env []string
	if c, err := limiters.ReadCex(path); err == nil {
		if t, err := limiters.TargetOf(c.Library); err == nil && t.Redis {
			srv, err := redisserver.Start(os.TempDir())
			if err != nil {
				fmt.Fprintln(os.Stderr, "tollgate limiters:", err)
				return 1
			}
			defer srv.Stop()
			stopOnSignal(srv)
			env = append(env, "TOLLGATE_REDIS_ADDR="+srv.Addr)
		}
	}
	r, err := limiters.Replay(root, work, path, env)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tollgate limiters:", err)
		return 2
	}
	fmt.Printf("%s %s@%s %s %s: %s\n", r.Verdict, r.Library, r.Version, r.Workload, r.Prop, r.Detail)
	if r.Verdict != limiters.Violated {
		return 1
	}
	return 0
}

func writeLimiterResults(dir string, rs []limiters.Result, elapsed time.Duration, seed uint64) error {
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
	fmt.Fprintf(f, "# Limiter campaign results\n\n`tollgate limiters`, %s, seed %d, %s, %d CPUs, %s/%s, %s; %s.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), seed, runtime.Version(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, host, elapsed.Round(time.Second))
	fmt.Fprintln(f, "## Summary")
	fmt.Fprintln(f)
	limiters.Summary(f, rs)
	fmt.Fprintln(f, "\n## Every check")
	fmt.Fprintln(f)
	limiters.Table(f, rs)
	fmt.Fprintln(f, "\n## Counterexamples")
	fmt.Fprintln(f)
	for _, r := range rs {
		if r.Verdict != limiters.Violated || !strings.HasSuffix(r.Cex, ".json") {
			continue
		}
		c, err := limiters.ReadCex(r.Cex)
		if err != nil {
			return err
		}
		png := strings.TrimSuffix(r.Cex, ".json") + ".png"
		if err := limiters.Plot(c, png); err != nil {
			fmt.Fprintf(f, "- (no plot: %v)\n", err)
		}
		how := fmt.Sprintf("%d steps (shrunk from %d)", len(c.Steps), c.Original)
		if len(c.Steps) == 0 {
			how = fmt.Sprintf("the worst window's %d calls as recorded on the real clock (the replay re-checks them)", len(c.Events))
		}
		fmt.Fprintf(f, "- %s %s, %s, %s: %s; %s. Replay: `%s`. Plot: [`cex/%s`](cex/%s)\n",
			limiters.Short(r.Library), r.Version, r.Workload, r.Prop, c.Finding.Detail, how, r.Replay, filepath.Base(png), filepath.Base(png))
	}
	return nil
}

func parseExpect(s string) (map[string]string, error) {
	want := map[string]string{}
	if s == "" {
		return want, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || strings.Count(k, ":") != 2 || !strings.Contains(k, "@") {
			return nil, fmt.Errorf("%q must be MODULE@VERSION:WORKLOAD:PROP=VERDICT", part)
		}
		want[k] = v
	}
	return want, nil
}

// checkExpect compares the verdicts with want; a key's version "newest"
// stands for the newest version of that library among the results.
func checkExpect(want map[string]string, rs []limiters.Result) []string {
	got := map[string]string{}
	newest := map[string]string{}
	for _, r := range rs {
		if n, ok := newest[r.Library]; !ok || limiters.CompareVersions(r.Version, n) > 0 {
			newest[r.Library] = r.Version
		}
	}
	for _, r := range rs {
		got[fmt.Sprintf("%s@%s:%s:%s", r.Library, r.Version, r.Workload, r.Prop)] = r.Verdict
		if r.Version == newest[r.Library] {
			got[fmt.Sprintf("%s@newest:%s:%s", r.Library, r.Workload, r.Prop)] = r.Verdict
		}
	}
	var bad []string
	for k, v := range want {
		if got[k] != v {
			bad = append(bad, fmt.Sprintf("%s=%s, got %q", k, v, got[k]))
		}
	}
	return bad
}

// findRepo walks up from the working directory to the go.mod of
// github.com/tollgate/tollgate.
func findRepo() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/tollgate/tollgate")
	out, err := cmd.Output()
	if err != nil {
		return "", errors.New("run it inside the tollgate checkout, or pass -repo DIR (go list -m github.com/tollgate/tollgate failed)")
	}
	return strings.TrimSpace(string(out)), nil
}

// stopOnSignal stops srv when the command is interrupted or terminated,
// which skips deferred calls: a campaign (or tollgate bench -redis) stopped
// half way leaves no redis-server behind.
func stopOnSignal(srv *redisserver.Server) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		srv.Stop()
		fmt.Fprintf(os.Stderr, "tollgate: %v: stopped redis-server %s\n", s, srv.Addr)
		os.Exit(130)
	}()
}
