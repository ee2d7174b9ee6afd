package fuzz

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutant"
)

// The reruns of one case behind mutant.Outcome.Rerun. The mutants command
// reruns every kill of the fuzz and rapid layers against the real
// implementation: a case that fails there too is the layer's false alarm,
// and is reported as an error, not as a kill.

// fuzzKill is the outcome of input failing tg against g (how names the
// input: a corpus entry, or a random input of a seed). The input is written
// as a corpus file, and Rerun runs it again against another table.
func fuzzKill(g fault.Fault, tg fuzzTarget, input []byte, fail *Failure, how string, seed uint64, opts Options) mutant.Outcome {
	out := mutant.Outcome{Killed: true, Property: fail.Property, Seed: seed, Detail: fail.Replay()}
	path, err := writeCrasher(tg.name, g, input)
	if err != nil {
		out.Detail += "\n(could not write the input: " + err.Error() + ")"
	}
	out.Replay = fmt.Sprintf("%s; cp %s fuzz/testdata/fuzz/%s/ && go test ./fuzz -run '^%s$/^%s$'%s",
		how, path, tg.name, tg.name, filepath.Base(path), faultArg(g))
	out.Rerun = func(h fault.Fault) mutant.Outcome {
		if fail := tg.run(input, h, opts); fail != nil {
			return fuzzKill(h, tg, input, fail, how, seed, opts)
		}
		return mutant.Outcome{Seed: seed}
	}
	return out
}

// rapidRerun runs the one rapid case of tg that caseSeed starts again
// against g, with the settings of a hunt.
func rapidRerun(tg rapidTarget, opts Options, caseSeed uint64) func(fault.Fault) mutant.Outcome {
	return func(g fault.Fault) mutant.Outcome {
		huntMu.Lock()
		defer huntMu.Unlock()
		settings := rapidSettings{}
		defer settings.restore()
		err := settings.hunt("1")
		if err == nil {
			err = settings.set("rapid.seed", strconv.FormatUint(caseSeed, 10))
		}
		if err != nil {
			return mutant.Outcome{Seed: caseSeed, Detail: err.Error()}
		}
		var kill killRecord
		rec := &recorder{}
		rapid.Check(rec, tg.prop(g, opts, kill.hook))
		if !rec.failed {
			return mutant.Outcome{Seed: caseSeed}
		}
		out := mutant.Outcome{Killed: true, Seed: caseSeed, Property: "panic", Detail: strings.Join(rec.out, "\n")}
		if kill.last != nil {
			out.Property, out.Detail = kill.last.Property, kill.last.Replay()
		}
		out.Replay = fmt.Sprintf("go test ./fuzz -run '^%s$'%s -rapid.seed=%d -rapid.checks=1 -rapid.steps=30 -rapid.nofailfile", tg.test, faultArg(g), caseSeed)
		if opts.PropertiesOnly {
			out.Replay += " -diff.props-only"
		}
		out.Rerun = rapidRerun(tg, opts, caseSeed)
		return out
	}
}

// faultArg is the -diff.fault flag that runs a test against g; none for
// the real implementation.
func faultArg(g fault.Fault) string {
	if g == fault.None {
		return ""
	}
	return " -diff.fault=" + g.String()
}

// hunt sets rapid's flags for a hunt of checks checks a round (the flags
// registered and parsed first: rapid consults testing.Short(), which needs
// them; inside a test binary both already happened). restore puts them
// back.
func (s *rapidSettings) hunt(checks string) error {
	testing.Init()
	if !flag.Parsed() {
		_ = flag.CommandLine.Parse(nil)
	}
	for name, v := range map[string]string{
		"rapid.checks": checks, "rapid.nofailfile": "true",
		"rapid.shrinktime": HuntShrinkTime.String(), "rapid.steps": "30", "rapid.v": "false", "rapid.failfile": "",
	} {
		if err := s.set(name, v); err != nil {
			return err
		}
	}
	return nil
}
