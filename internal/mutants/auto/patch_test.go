package auto

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/testlong"
)

// fixturePatch is a unified diff of testdata/fixture/fixture.go: one hunk
// whose old and new lines are given.
func fixturePatch(t *testing.T, comment, start string, old, new []string) string {
	t.Helper()
	const file = "internal/mutants/auto/testdata/fixture/fixture.go"
	var b strings.Builder
	b.WriteString(comment + "\n\n--- a/" + file + "\n+++ b/" + file + "\n")
	b.WriteString("@@ " + start + " @@\n")
	for _, l := range old {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range new {
		b.WriteString("+" + l + "\n")
	}
	p := filepath.Join(t.TempDir(), "draft.patch")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestJudgePatchOnFixture judges drafts of hand-written mutants of
// testdata/fixture through an overlay, with nothing generated: one a test
// fails, one no test can see (it survives), and one that does not apply
// (an error naming the hunk). Hangs are judged by judgeLayer, as in a
// campaign (TestCampaignOnFixture). The fixture's source is unchanged afterwards.
func TestJudgePatchOnFixture(t *testing.T) {
	testlong.Skip(t)
	r := root(t)
	src := filepath.Join(r, "internal/mutants/auto/testdata/fixture/fixture.go")
	before, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Root: r, Layers: []Layer{{Name: "unit", Run: "."}}, MinTimeout: time.Second}
	judge := func(p string) *PatchVerdict {
		t.Helper()
		v, err := JudgePatch(cfg, p)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(v.Report())
		if len(v.Layers) != 1 {
			t.Fatalf("%d layer verdicts, want 1", len(v.Layers))
		}
		return v
	}

	wrong := judge(fixturePatch(t, "Clamp answers lo above the range.", "-10,1 +10,1",
		[]string{"\t\treturn hi"}, []string{"\t\treturn lo"}))
	if l := wrong.Layers[0]; !wrong.Killed() || l.Hang || l.Test != "TestClamp" {
		t.Errorf("Clamp returning lo above the range: want killed by TestClamp, got %+v", l)
	}

	same := judge(fixturePatch(t, "Clamp's lower bound compared with <=.", "-7,1 +7,1",
		[]string{"\tif v < lo {"}, []string{"\tif v <= lo {"}))
	if same.Killed() || !strings.Contains(same.Report(), "SURVIVED") {
		t.Errorf("v <= lo answers as v < lo does: want it to survive, got %+v", same.Layers[0])
	}

	_, err = JudgePatch(cfg, fixturePatch(t, "A hunk that does not apply.", "-7,1 +7,1",
		[]string{"\tif v < low {"}, []string{"\tif v <= lo {"}))
	if err == nil || !strings.Contains(err.Error(), "hunk 1") {
		t.Errorf("a patch whose hunk does not apply: want an error naming hunk 1, got %v", err)
	}

	after, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Error("judging a patch changed fixture.go on disk")
	}
}
