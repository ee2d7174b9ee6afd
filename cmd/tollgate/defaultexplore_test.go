package main

import (
	"io"
	"regexp"
	"slices"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/interleave"
	"github.com/tollgate/tollgate/internal/mutants/auto"
)

// TestOneDefaultExploreRun: the three checks that call themselves "the
// default explore run" run the same one, interleave.DefaultRun: `tollgate
// explore` with no flags (and with -mutant alone, per mutant), the mutant
// matrix's explore layer (interleave.Hunt, through interleave.HuntPlan), and the
// explore layer of the mutation oracles, which `tollgate mutants --patch`
// and both automatic campaigns run (auto.Layers, auto.ConcurrencyLayers:
// TestDefaultExplore behind -explore.default, which runs DefaultRun).
func TestOneDefaultExploreRun(t *testing.T) {
	same := func(what string, got []interleave.Scenario, gotOpt interleave.Options, want []interleave.Scenario, wantOpt interleave.Options) {
		t.Helper()
		names := func(ss []interleave.Scenario) []string {
			out := make([]string, len(ss))
			for i, s := range ss {
				out[i] = s.Name
			}
			return out
		}
		if g, w := names(got), names(want); !slices.Equal(g, w) {
			t.Errorf("%s runs %d scenarios, the default run %d (first %v, want %v)", what, len(g), len(w), g[:min(3, len(g))], w[:min(3, len(w))])
		}
		if gotOpt.Strategy != wantOpt.Strategy || gotOpt.Bound != wantOpt.Bound || gotOpt.Budget != wantOpt.Budget || gotOpt.Fault != wantOpt.Fault {
			t.Errorf("%s explores with strategy %q, bound %d, budget %+v, mutant %s; the default run with %q, %d, %+v, %s",
				what, gotOpt.Strategy, gotOpt.Bound, gotOpt.Budget, gotOpt.Fault, wantOpt.Strategy, wantOpt.Bound, wantOpt.Budget, wantOpt.Fault)
		}
	}

	c, err := parseExplore(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want, wantOpt := interleave.DefaultRun(fault.None)
	same("tollgate explore", c.scenarios, c.opt, want, wantOpt)

	for _, f := range fault.All() {
		c, err := parseExplore([]string{"-mutant", f.String()}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		ss, opt := interleave.HuntPlan(f)
		same("the matrix's explore hunt of "+f.String(), ss, opt, c.scenarios, c.opt)
	}

	// The oracles' explore layer: TestDefaultExplore and nothing narrower.
	for _, set := range []struct {
		name   string
		layers []auto.Layer
	}{{"auto.Layers (--patch, --auto)", auto.Layers}, {"auto.ConcurrencyLayers (--auto -concurrency)", auto.ConcurrencyLayers}} {
		n := 0
		for _, l := range set.layers {
			if l.Pkg != "./internal/interleave" {
				continue
			}
			n++
			run := regexp.MustCompile(l.Run)
			if !run.MatchString("TestDefaultExplore") || !slices.Contains(l.Args, "-explore.default") {
				t.Errorf("%s: the explore layer %q runs -test.run %q %v, not TestDefaultExplore with -explore.default", set.name, l.Name, l.Run, l.Args)
			}
			for _, narrower := range []string{"TestCatalogueRealCode", "TestDirectedRealCode", "TestSystematicRealCode", "TestTakeRereadsAfterLostRace"} {
				if run.MatchString(narrower) {
					t.Errorf("%s: the explore layer %q also runs %s, a narrower explore than the default run", set.name, l.Name, narrower)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s: %d layers run the explorer, want 1", set.name, n)
		}
	}
}
