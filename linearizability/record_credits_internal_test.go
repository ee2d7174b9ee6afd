package linearizability

import (
	"sync/atomic"
	"testing"
)

// swept only rises: a sweeper that read fewer exits and finishes last
// leaves the count of the sweep that covered more (raiseTo), so a holder
// waiting for that sweep is not left waiting for one nobody will start.
func TestSweptOnlyRises(t *testing.T) {
	var v atomic.Int64
	raiseTo(&v, 6) // the sweeper that saw 6 exits finishes first
	raiseTo(&v, 5) // the one that saw 5 finishes after it
	if got := v.Load(); got != 6 {
		t.Fatalf("swept = %d after sweeps covering 6 and then 5 exits, want 6", got)
	}
}
