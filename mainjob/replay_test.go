package mainjob

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// writeHistory writes a one-take token-bucket history into a new
// directory: admitted with the remainder rem from a full bucket of 10.
func writeHistory(t *testing.T, rem float64) string {
	t.Helper()
	lim := model.Limits{Capacity: 10, RefillPerSecond: 1}
	h := linearizability.TBHistory{Ops: []linearizability.TBOp{{Client: 0,
		Input:  model.TBInput[string]{Kind: model.TBTake, Key: "k", Limits: lim, Cost: 1, NowMs: 0},
		Output: model.TBOutput{OK: true, Remaining: rem}, Call: 0, Return: 10}}}
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "history.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// files lists the names in dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestReplayWritesOnlyWhatIsNew: replaying a history that is not
// linearizable writes its visualization beside it and says where, and
// nothing else: not a copy of the history (issue 45), no scratch
// directory. A linearizable history writes nothing, and says so.
func TestReplayWritesOnlyWhatIsNew(t *testing.T) {
	// A take of 1 from a full bucket of 10 cannot leave 5.
	path := writeHistory(t, 5)
	var out strings.Builder
	v, err := Replay(path, 0, &out)
	if err != nil || v != Illegal {
		t.Fatalf("Replay = %v, %v; want Illegal\n%s", v, err, out.String())
	}
	dir := filepath.Dir(path)
	if got, want := files(t, dir), []string{"history-replay.html", "history.json"}; !slices.Equal(got, want) {
		t.Errorf("the history's directory holds %q after the replay, want %q", got, want)
	}
	html := filepath.Join(dir, "history-replay.html")
	if !strings.Contains(out.String(), "visualization: "+html+" (the only file written") {
		t.Errorf("output does not say where it wrote:\n%s", out.String())
	}

	path = writeHistory(t, 9)
	out.Reset()
	if v, err := Replay(path, 0, &out); err != nil || v != Ok {
		t.Fatalf("Replay = %v, %v; want Ok\n%s", v, err, out.String())
	}
	if got := files(t, filepath.Dir(path)); !slices.Equal(got, []string{"history.json"}) {
		t.Errorf("a linearizable replay left %q", got)
	}
	if !strings.Contains(out.String(), "wrote nothing") {
		t.Errorf("output does not say nothing was written:\n%s", out.String())
	}
}
