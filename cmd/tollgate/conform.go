package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tollgate/tollgate/conform"
)

func init() {
	register(command{
		name:    "conform",
		summary: "check a port's driver against the model (spec/protocol.md): tollgate conform [flags] -- CMD ARGS...",
		run:     runConform,
	})
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runConform(args []string) int {
	fs := flag.NewFlagSet("conform", flag.ContinueOnError)
	seed := fs.Uint64("seed", 0, "seed of the random and concurrent suites (0: derived from the clock, printed)")
	budget := fs.Duration("budget", 5*time.Second, "time for each random and concurrent suite, per primitive")
	clients := fs.Int("clients", 16, "clients in the concurrent suite (1..64)")
	suites := fs.String("suites", strings.Join(conform.AllSuites, ","), "suites to run, comma-separated: "+strings.Join(conform.AllSuites, ", "))
	primitives := fs.String("primitives", "", "primitives to check, comma-separated: tb, cr (empty: every one the driver lists)")
	timeout := fs.Duration("timeout", 10*time.Second, "per-request timeout; a driver that does not answer in time fails")
	dir := fs.String("dir", "", "directory for files written on failure (porcupine visualizations); empty: a new temporary directory, printed when a failure writes to it and removed when none does")
	verbose := fs.Bool("v", false, "copy the driver's stderr to stderr")
	writeVectors := fs.String("write-vectors", "", "regenerate the golden vectors from the model into DIR and exit")
	var vectors listFlag
	fs.Var(&vectors, "vectors", "an extra vector file to run (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: tollgate conform [flags] -- CMD ARGS...\n\nStarts the driver CMD and runs the golden vectors, random sequential sessions and\nconcurrent sessions for every primitive it supports (spec/protocol.md).\n\nflags:")
		fs.PrintDefaults()
		helpTail(os.Stderr, "conform")
	}
	var argv []string
	for i, a := range args {
		if a == "--" {
			args, argv = args[:i], args[i+1:]
			break
		}
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if *writeVectors != "" {
		paths, err := conform.WriteVectors(*writeVectors)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("wrote", strings.Join(paths, " "))
		return 0
	}
	if fs.NArg() > 0 || len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "tollgate conform: give the driver command after --")
		fs.Usage()
		return 2
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano()%1_000_000) + 1 // printed with the results
	}
	cfg := conform.Config{Argv: argv, Seed: *seed, Budget: *budget, Clients: *clients, Timeout: *timeout, Dir: *dir}
	for _, s := range strings.Split(*suites, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.Suites = append(cfg.Suites, s)
		}
	}
	for _, p := range strings.Split(*primitives, ",") {
		if p = strings.TrimSpace(p); p != "" {
			cfg.Primitives = append(cfg.Primitives, p)
		}
	}
	if len(vectors) > 0 {
		files, err := conform.LoadVectors(vectors...)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		cfg.Vectors = files
	}
	if *verbose {
		cfg.Log = os.Stderr
	}
	cfg.Progress, cfg.ProgressEvery = os.Stderr, 2*time.Second
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "tollgate-conform-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "tollgate conform:", err)
			return 1
		}
		cfg.Dir = d
		defer func() {
			// Removed when empty: a run that wrote no failure leaves nothing.
			if entries, err := os.ReadDir(d); err == nil && len(entries) == 0 {
				_ = os.Remove(d)
			}
		}()
	}
	rep := conform.Run(cfg)
	rep.Print(os.Stdout, conformReplay(*budget, *clients, argv))
	if entries, err := os.ReadDir(cfg.Dir); err == nil && len(entries) > 0 {
		fmt.Printf("\nfailure files (porcupine visualizations, histories) are under %s\n", cfg.Dir)
	}
	if !rep.OK() {
		return 1
	}
	return 0
}

// conformReplay is the format of the command that replays a failure, with
// verbs for its seed and suite.
func conformReplay(budget time.Duration, clients int, argv []string) string {
	return fmt.Sprintf("go run ./cmd/tollgate conform --seed %%d --suites %%s --budget %s --clients %d -- %s", budget, clients, strings.Join(argv, " "))
}
