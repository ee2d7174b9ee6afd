package mainjob

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/linearizability"
)

// TestMerge: the worst verdict wins, in either order, and Ok is the
// identity — so a job's verdict does not depend on the order of its checks.
func TestMerge(t *testing.T) {
	for _, c := range []struct{ a, b, want Verdict }{
		{Ok, Ok, Ok},
		{Ok, Unknown, Unknown},
		{Unknown, Ok, Unknown},
		{Unknown, Unknown, Unknown},
		{Ok, Illegal, Illegal},
		{Illegal, Ok, Illegal},
		{Unknown, Illegal, Illegal},
		{Illegal, Unknown, Illegal},
		{Illegal, Illegal, Illegal},
	} {
		if got := c.a.Merge(c.b); got != c.want {
			t.Errorf("%v.Merge(%v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestVerdictOf: porcupine's Unknown stays Unknown (never a pass), and
// anything that is neither Ok nor Unknown is Illegal.
func TestVerdictOf(t *testing.T) {
	for r, want := range map[linearizability.Result]Verdict{
		linearizability.Ok: Ok, linearizability.Unknown: Unknown, linearizability.Illegal: Illegal, "": Illegal,
	} {
		if got := verdictOf(r); got != want {
			t.Errorf("verdictOf(%q) = %v, want %v", r, got, want)
		}
	}
}

// TestNeverOkOverAnIllegalRow: whatever verdict the checks reached, a row
// reading Illegal (a lossy fault row's whole history, say) or FAILED makes
// the job fail, one reading Unknown makes it Unknown, and the last line
// says Ok only over rows that do.
func TestNeverOkOverAnIllegalRow(t *testing.T) {
	ok := row{result: "Ok"}
	for _, c := range []struct {
		rows []row
		want Verdict
	}{
		{[]row{ok, {result: "Illegal (limit)"}}, Illegal},
		{[]row{ok, {result: "FAILED: the fault found no write in flight"}}, Illegal},
		{[]row{ok, {result: "Unknown"}}, Unknown},
		{[]row{ok, {result: "Unknown"}, {result: "Illegal before the fault"}}, Illegal},
		{[]row{ok, {result: "Ok before the fault"}}, Ok},
	} {
		v := Ok.Merge(rowsVerdict(c.rows))
		if v != c.want {
			t.Errorf("%v: verdict %v, want %v", c.rows, v, c.want)
		}
		line := resultLine(v, c.rows)
		if strings.HasPrefix(line, "Ok") != (c.want == Ok) {
			t.Errorf("%v: %q", c.rows, line)
		}
		if strings.Contains(line, "every history linearizable") && strings.Contains(fmt.Sprint(c.rows), "before the fault") {
			t.Errorf("%v: %q over a row checked only before its fault", c.rows, line)
		}
	}
}
