package fuzz

import (
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutant"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

// TestRerunRepeatsTheCase: a kill of the fuzz and rapid layers reruns the
// very case that killed: against the same mutant it fails again, with the
// same property, seed and replay, and against the real implementation it
// passes.
func TestRerunRepeatsTheCase(t *testing.T) {
	build.Need(t)
	t.Setenv("TMPDIR", t.TempDir()) // the fuzz hunt's crasher files go where t.TempDir removes them
	for name, hunt := range map[string]func(fault.Fault, time.Duration, uint64) mutant.Outcome{"fuzz": HuntFuzz, "rapid": HuntRapid} {
		out := hunt(fault.Named("tb-no-clamp"), 200*time.Millisecond, 3)
		if !out.Killed || out.Rerun == nil {
			t.Fatalf("%s: tb-no-clamp not killed, or no Rerun: %+v", name, out)
		}
		again := out.Rerun(fault.Named("tb-no-clamp"))
		if !again.Killed || again.Property != out.Property || again.Seed != out.Seed || again.Replay != out.Replay {
			t.Errorf("%s: the rerun against tb-no-clamp found %v %q (seed %d, %s), the hunt %v %q (seed %d, %s)", name,
				again.Killed, again.Property, again.Seed, again.Replay, out.Killed, out.Property, out.Seed, out.Replay)
		}
		if real := out.Rerun(fault.None); real.Killed {
			t.Errorf("%s: the real implementation fails the case that killed tb-no-clamp: %s\n%s", name, real.Replay, real.Detail)
		}
	}
}
