package main

import (
	"fmt"
	"io"
	"strings"
)

// One help convention for every command (TestHelpConvention checks it):
// `tollgate NAME -h` writes to stderr "usage: tollgate NAME …", what the
// command does, its flags, then examples and the exit codes written here,
// and exits 0; a flag the command cannot parse writes the flag package's
// complaint and the same help, and exits 2.

// An exitDoc is one exit code of a command and what it means.
type exitDoc struct {
	code    int
	meaning string
}

// helpTails are each command's examples and exit codes, the end of its
// help.
var helpTails = map[string]struct {
	examples []string
	exits    []exitDoc
}{
	"check": {
		examples: []string{
			"go run ./cmd/tollgate check                          # both primitives, in process, for -duration 1m0s",
			"go run ./cmd/tollgate check -duration 5m -primitive tokenbucket",
			"go run ./cmd/tollgate check -backend redis           # on a throwaway redis-server",
			"go run ./cmd/tollgate check -backend redis-cluster   # on a throwaway Redis Cluster (3 primaries, a replica each)",
		},
		exits: []exitDoc{{0, "every history checked Ok"}, {1, "a violation (the history and a replay command are printed)"}, {2, "a bad flag"}, {3, "a checker timed out (Unknown): not a pass"}},
	},
	"explore": {
		examples: []string{
			"go run ./cmd/tollgate explore                        # catalogue, generated and directed runs, DFS at bound 2",
			"go run ./cmd/tollgate explore -scenario 'sys-tb-*' -bound 3",
			"go run ./cmd/tollgate explore -mutant tb-peek-torn -failfast",
			"go run ./cmd/tollgate explore -scenario cr-enqueue-twice -replay 0x7.1x12.0x3",
		},
		exits: []exitDoc{{0, "every scenario passed"}, {1, "a violation, or a scenario that could not run"}, {2, "a bad flag or scenario name"}},
	},
	"mutants": {
		examples: []string{
			"go run ./cmd/tollgate mutants -budget 10s -seed 1    # every patch mutant, every layer",
			"go run ./cmd/tollgate mutants -layer explore -mutant cr-box-filled-late",
			"go run ./cmd/tollgate mutants --list -readme docs/checks.md",
			"go run ./cmd/tollgate mutants --auto -h              # the generated-mutant campaign and its flags",
			"go run ./cmd/tollgate mutants --patch my.patch       # a draft mutant judged through an -overlay, nothing generated",
		},
		exits: []exitDoc{{0, "every mutant killed by every layer expected to see it"}, {1, "a survivor, or a layer that fails the real code"}, {2, "a bad flag"}},
	},
	"mutants --auto": {
		examples: []string{
			"go run ./cmd/tollgate mutants --auto -q              # every generated mutant of impl/ and model/",
			"go run ./cmd/tollgate mutants --auto -changed -base origin/main",
			"go run ./cmd/tollgate mutants --auto -q -shard 2/4",
		},
		exits: []exitDoc{{0, "every non-equivalent mutant killed"}, {1, "a survivor not listed as equivalent"}, {2, "a bad flag"}},
	},
	"mutants --patch": {
		examples: []string{
			"go run ./cmd/tollgate mutants --patch internal/mutants/patches/tb-no-clamp.patch",
			"go run ./cmd/tollgate mutants --patch -q draft.patch",
		},
		exits: []exitDoc{{0, "every patch killed by some layer"}, {1, "a patch no layer kills, or one that does not apply"}, {2, "a bad flag or no patch named"}},
	},
	"conform": {
		examples: []string{
			"go run ./cmd/tollgate conform -- go run ./cmd/tollgate driver",
			"go run ./cmd/tollgate conform -primitives tb -seed 7 -- elixir ports/elixir/driver.exs",
			"go run ./cmd/tollgate conform -write-vectors spec/vectors",
		},
		exits: []exitDoc{{0, "every case run passed, and at least one ran"}, {1, "a case failed, a case could not run, or nothing ran"}, {2, "a bad flag or no driver command"}},
	},
	"driver": {
		examples: []string{
			"go run ./cmd/tollgate conform -- go run ./cmd/tollgate driver",
			"go run ./cmd/tollgate conform -- go run ./cmd/tollgate driver -backend redis",
			"go run ./cmd/tollgate conform -- go run ./cmd/tollgate driver -backend redis-cluster",
			"go run ./cmd/tollgate conform -- go run ./cmd/tollgate driver -mutant tb-no-clamp   # conform must fail",
		},
		exits: []exitDoc{{0, "stdin ended"}, {1, "the driver could not serve (a server that did not start, a broken pipe)"}, {2, "a bad flag"}},
	},
	"bench": {
		examples: []string{
			"go run ./cmd/tollgate bench                          # quick suite, into a new directory it prints",
			"go run ./cmd/tollgate bench -full -out bench/results # refresh the committed results",
			"go run ./cmd/tollgate bench -run 'TB/work=admit/keys=1/' -rounds 5",
			"go run ./cmd/tollgate bench -redis-cluster -run REDIS-CLUSTER -rounds 5 -memkeys 0",
		},
		exits: []exitDoc{{0, "every selected case measured"}, {1, "a case failed its check or could not run"}, {2, "a bad flag, or a -run that selects nothing"}},
	},
	"version": {
		examples: []string{
			"go run ./cmd/tollgate version",
			"go install github.com/tollgate/tollgate/cmd/tollgate@latest && tollgate version",
		},
		exits: []exitDoc{{0, "printed"}, {1, "the binary holds no build information"}, {2, "a bad flag or an argument"}},
	},
	"limiters": {
		examples: []string{
			"go run ./cmd/tollgate limiters -quick -versions 'golang.org/x/time=newest'",
			"go run ./cmd/tollgate limiters -shard 2/4 -out results-2",
			"go run ./cmd/tollgate limiters --replay /tmp/tollgate-limiters-…/cex/time@v0.9.0-tiny-rate-L1.json",
		},
		exits: []exitDoc{{0, "every -expect verdict came out and every violation is explained"}, {1, "a verdict did not come out, a violation nothing explains, or a run that could not finish"}, {2, "a bad flag"}},
	},
}

// helpTail writes the examples and exit codes of command name.
func helpTail(w io.Writer, name string) {
	t, ok := helpTails[name]
	if !ok {
		panic("tollgate: no help tail for command " + name)
	}
	var b strings.Builder
	b.WriteString("\nexamples:\n")
	for _, e := range t.examples {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	b.WriteString("\nexit codes:\n")
	for _, e := range t.exits {
		fmt.Fprintf(&b, "  %d  %s\n", e.code, e.meaning)
	}
	io.WriteString(w, b.String())
}
