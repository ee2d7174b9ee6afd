package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/bench"
	"github.com/tollgate/tollgate/redisserver"
)

func init() {
	register(command{
		name:    "bench",
		summary: "contention benchmarks against peer designs: raw results, ratio table, plots",
		run:     runBench,
	})
}

// benchOptions are the flags of tollgate bench.
type benchOptions struct {
	full      bool
	out       string
	benchtime time.Duration
	rounds    int
	run       string
	memKeys   int
	redis     bool
}

func parseBenchFlags(args []string, stderr io.Writer) (benchOptions, error) {
	var o benchOptions
	fs := flag.NewFlagSet("tollgate bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.full, "full", false, "run the complete matrix (goroutines 1,2,4,8,16,64; keys 1,16,10000; every workload)")
	fs.StringVar(&o.out, "out", filepath.Join("bench", "results"), "directory for raw.txt, RESULTS.md and the plots")
	fs.DurationVar(&o.benchtime, "benchtime", 0, "target time per case per round (default 40ms, 100ms with -full)")
	fs.IntVar(&o.rounds, "rounds", 0, "rounds of every case, interleaved with the other designs at the same goroutine count; each case keeps its median round (default 3)")
	fs.StringVar(&o.run, "run", "", "only cases whose name matches this regular expression")
	fs.IntVar(&o.memKeys, "memkeys", 1_000_000, "keys for the memory-per-idle-key measurement (0 skips it)")
	fs.BoolVar(&o.redis, "redis", false, "also measure the Redis-backed take (impl/redis/tokenbucket) against go-redis/redis_rate v10 and PING on one throwaway redis-server (needs redis-server on PATH)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: tollgate bench [flags]\n\nRuns tollgate's contention benchmarks in process and writes, to -out:\n  raw.txt      every round's results in the format benchstat reads\n  RESULTS.md   machine, targets, and tollgate-vs-peer ratio tables\n  *.png *.svg  throughput and p99 latency against goroutines, per design\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("tollgate bench: unexpected argument %q", fs.Arg(0))
	}
	switch {
	case o.benchtime < 0:
		return o, fmt.Errorf("tollgate bench: -benchtime = %v: must not be negative", o.benchtime)
	case o.rounds < 0:
		return o, fmt.Errorf("tollgate bench: -rounds = %d: must not be negative", o.rounds)
	case o.memKeys < 0:
		return o, fmt.Errorf("tollgate bench: -memkeys = %d: must not be negative", o.memKeys)
	case o.out == "":
		return o, fmt.Errorf("tollgate bench: -out is empty: it must name a directory")
	}
	if o.benchtime == 0 {
		o.benchtime = 40 * time.Millisecond
		if o.full {
			o.benchtime = 100 * time.Millisecond
		}
	}
	if o.rounds == 0 {
		o.rounds = 3
	}
	if _, err := regexp.Compile(o.run); err != nil {
		return o, fmt.Errorf("tollgate bench: -run = %q: not a regular expression: %v", o.run, err)
	}
	return o, nil
}

func runBench(args []string) int {
	o, err := parseBenchFlags(args, os.Stderr)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := benchRun(o, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// benchRun measures the suite and writes the results into o.out.
func benchRun(o benchOptions, progress io.Writer) error {
	testing.Init()
	if err := flag.Set("test.benchtime", o.benchtime.String()); err != nil {
		return fmt.Errorf("tollgate bench: setting benchtime: %w", err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("tollgate bench: -out: %w", err)
	}
	began := time.Now()
	var raw bytes.Buffer
	raw.WriteString(bench.RawHeader())
	re := regexp.MustCompile(o.run)
	rn := bench.Runner{
		Rounds:   o.rounds,
		Raw:      &raw,
		Progress: func(s string) { fmt.Fprintln(progress, s) },
		Filter:   func(c bench.Case) bool { return re.MatchString(c.Name) },
	}
	results, failed := rn.Run(bench.Suite(o.full))
	var mem []bench.MemResult
	if o.memKeys > 0 {
		for _, d := range bench.MemoryDesigns() {
			if !re.MatchString("MemoryPerKey/design=" + d.Name) {
				continue
			}
			m := bench.MemResult{Design: d.Name, Keys: o.memKeys, BytesPerKey: bench.MemoryPerKey(d, o.memKeys)}
			fmt.Fprintf(progress, "memory %s: %.1f bytes per idle key at %d keys\n", d.Name, m.BytesPerKey, m.Keys)
			fmt.Fprintln(&raw, m.MemLine())
			mem = append(mem, m)
		}
	}
	var reclaimed []bench.ReclaimRound
	if o.memKeys > 0 && re.MatchString("MemoryReclaimed") {
		reclaimed = bench.ReclaimedMemory(o.memKeys, 3)
		for _, r := range reclaimed {
			fmt.Fprintf(progress, "memory reclaimed, round %d: %d keys held %.1f bytes/key, %d bytes left after the reclaim\n", r.Round, r.Keys, float64(r.Held)/float64(r.Keys), r.Left)
			fmt.Fprintln(&raw, r.Line())
		}
	}
	var redisResults []bench.Result
	var redisServerUs map[string]float64
	if o.redis {
		srv, err := redisserver.Start(os.TempDir())
		if err != nil {
			return fmt.Errorf("tollgate bench: -redis: %w", err)
		}
		stopOnSignal(srv)
		var redisFailed []string
		redisResults, redisFailed = rn.Run(bench.RedisSuite(srv.Addr))
		if redisServerUs, err = bench.RedisServerTimes(srv.Addr); err != nil {
			fmt.Fprintf(progress, "tollgate bench: -redis: reading the server's command times: %v\n", err)
		}
		srv.Stop()
		failed = append(failed, redisFailed...)
	}
	rawPath := filepath.Join(o.out, "raw.txt")
	if err := os.WriteFile(rawPath, raw.Bytes(), 0o644); err != nil {
		return fmt.Errorf("tollgate bench: %w", err)
	}
	plots, err := bench.WritePlots(o.out, results)
	if err != nil {
		return err
	}
	var md bytes.Buffer
	mode := "quick"
	if o.full {
		mode = "full"
	}
	fmt.Fprintf(&md, "# tollgate bench results\n\n")
	fmt.Fprintf(&md, "Measured %s (%s run, %d round(s), %v per case per round, %d cases, %s wall).\n\n",
		began.UTC().Format("2006-01-02 15:04 MST"), mode, o.rounds, o.benchtime, len(results)+len(redisResults), time.Since(began).Round(time.Second))
	fmt.Fprintf(&md, "```\ncpu: %s\n%s\n```\n\n", bench.CPUModel(), bench.Env())
	if n := bench.Noise(results); n == n {
		fmt.Fprintf(&md, "Noise: the median case's ns/op varied by %.0f%% between rounds ((max−min)/median).\n\n", 100*n)
	}
	fmt.Fprintf(&md, "Ratios are tollgate's ns/op (wall time per operation, all goroutines together) divided by the peer's at the same goroutine count, with the ratio of CPU time per operation (process user+system time, GC included) in parentheses: below 1.00 tollgate is faster; **bold** marks where it loses on wall time.\n\n## Targets\n\n")
	bench.WriteTargets(&md, bench.Targets(results, mem))
	if len(failed) > 0 {
		fmt.Fprintf(&md, "\n## Failed checks (these cases have no numbers)\n\n")
		for _, f := range failed {
			fmt.Fprintf(&md, "- %s\n", f)
		}
	}
	fmt.Fprintf(&md, "\n## Ratio tables\n")
	bench.WriteTable(&md, results, mem)
	bench.WriteReclaimed(&md, reclaimed)
	if len(redisResults) > 0 {
		fmt.Fprintf(&md, "\n## Redis\n\nA take from impl/redis/tokenbucket (one FCALL of its library) against go-redis/redis_rate v10 (one EVALSHA) and PING (the floor: a round trip that does nothing), on one local redis-server, each design with its own client of go-redis's default options and retries off, every take admitted. The server shares the machine's cores with the benchmark.\n")
		if n := bench.Noise(redisResults); n == n {
			fmt.Fprintf(&md, "\nNoise: the median Redis case's ns/op varied by %.0f%% between rounds.\n", 100*n)
		}
		bench.WriteTable(&md, redisResults, nil)
		if len(redisServerUs) > 0 {
			fmt.Fprintf(&md, "\nServer time per call over the whole run (INFO commandstats): FCALL (tollgate) %.2f µs, EVALSHA (redis_rate) %.2f µs, PING %.2f µs.\n",
				redisServerUs["fcall"], redisServerUs["evalsha"], redisServerUs["ping"])
		}
	}
	fmt.Fprintf(&md, "\n## Plots\n\n")
	for _, p := range plots {
		if strings.HasSuffix(p, ".png") {
			fmt.Fprintf(&md, "![%s](%s)\n", filepath.Base(p), filepath.Base(p))
		}
	}
	mdPath := filepath.Join(o.out, "RESULTS.md")
	if err := os.WriteFile(mdPath, md.Bytes(), 0o644); err != nil {
		return fmt.Errorf("tollgate bench: %w", err)
	}
	fmt.Fprintf(progress, "wrote %s, %s and %d plots in %s (%s)\n", rawPath, mdPath, len(plots), o.out, time.Since(began).Round(time.Second))
	if len(failed) > 0 {
		return fmt.Errorf("tollgate bench: %d case(s) failed their checks and have no numbers:\n  %s", len(failed), strings.Join(failed, "\n  "))
	}
	return nil
}
