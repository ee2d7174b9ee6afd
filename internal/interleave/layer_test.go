package interleave

import (
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

// TestHuntRerun: a kill carries its case, which the mutant fails again and
// the real table passes (tollgate mutants judges every kill by that).
func TestHuntRerun(t *testing.T) {
	build.Need(t)
	// Hunt writes the failure's visualization under
	// $TMPDIR/tollgate-explore for a person to open; the test's go where
	// t.TempDir removes them.
	t.Setenv("TMPDIR", t.TempDir())
	out := Hunt(fault.Named("cr-finish-blind"), time.Minute, 0)
	if !out.Killed || out.Rerun == nil {
		t.Fatalf("cr-finish-blind: killed %v, rerun %v: %s", out.Killed, out.Rerun != nil, out.Detail)
	}
	if again := out.Rerun(fault.Named("cr-finish-blind")); !again.Killed {
		t.Errorf("the kill's case did not fail the mutant again: %s", again.Detail)
	}
	if real := out.Rerun(fault.None); real.Killed {
		t.Errorf("the kill's case fails the real table: %s", real.Detail)
	}
}
