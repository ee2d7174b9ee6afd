package conform

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
)

const vectorDir = "../spec/vectors"

// TestVectorsMatchModel fails when the committed golden vectors drift from
// what the model answers today. Regenerate with
// go run ./cmd/tollgate conform --write-vectors spec/vectors
func TestVectorsMatchModel(t *testing.T) {
	files, err := GenerateVectors()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		path := filepath.Join(vectorDir, VectorFileNames[f.Primitive])
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (generate with: go run ./cmd/tollgate conform --write-vectors spec/vectors)", err)
		}
		if want := EncodeVectors(f); !bytes.Equal(got, want) {
			t.Errorf("%s drifted from the model; regenerate with: go run ./cmd/tollgate conform --write-vectors spec/vectors", path)
		}
	}
}

// notInVectors are the invariant IDs a sequential vector cannot show, and the
// suite or layer that checks each instead.
var notInVectors = map[string]string{
	"T11": "concurrency: the concurrent suite (porcupine, linearizability.CheckTokenBucket)",
	"C16": "concurrency: the concurrent suite (porcupine, linearizability.CheckCredits)",
	"C15": "the owner protocol of impl/credits.Owner is in-process Go, not part of the driver protocol",
}

// TestVectorsCoverEveryInvariant: every invariant ID of the spec is covered
// by a named vector, or listed in notInVectors with the check that covers it.
func TestVectorsCoverEveryInvariant(t *testing.T) {
	files, err := GenerateVectors()
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, f := range files {
		for _, c := range f.Cases {
			for _, id := range c.Covers {
				covered[id] = true
			}
		}
	}
	re := regexp.MustCompile(`\*\*([CT][0-9]+)\*\*`)
	for _, spec := range []string{"../spec/tokenbucket.md", "../spec/credits.md"} {
		b, err := os.ReadFile(spec)
		if err != nil {
			t.Fatal(err)
		}
		ids := re.FindAllStringSubmatch(string(b), -1)
		if len(ids) < 10 {
			t.Fatalf("%s: found only %d invariant IDs", spec, len(ids))
		}
		for _, m := range ids {
			id := m[1]
			if !covered[id] && notInVectors[id] == "" {
				t.Errorf("%s (%s) is covered by no vector", id, spec)
			}
			if covered[id] && notInVectors[id] != "" {
				t.Errorf("%s is covered by a vector but listed in notInVectors", id)
			}
		}
	}
}

// TestExtraVectorFile: a vector file given with --vectors runs with the
// committed ones, and a case whose expectation the driver does not meet is
// reported by name with the request and both answers.
func TestExtraVectorFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mine.json")
	err := os.WriteFile(path, []byte(`{"protocol":1,"primitive":"tb","cases":[
	  {"name":"mine/peek-unseen-is-capacity","covers":["T6"],"steps":[
	    {"send":{"op":"tb.peek","key":"x","capacity":4,"refill_per_second":1,"now_ms":0},"expect":{"ok":true,"tokens":4}}]},
	  {"name":"mine/wrong-on-purpose","covers":["T1"],"steps":[
	    {"send":{"op":"tb.take","key":"x","capacity":4,"refill_per_second":1,"now_ms":0},"expect":{"ok":true,"remaining":2}}]}]}`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	files, err := LoadVectors(path)
	if err != nil {
		t.Fatal(err)
	}
	rep := Run(Config{Serve: serveWith(fault.None), Seed: 1, Budget: time.Second, Clients: 2, Timeout: 10 * time.Second,
		Suites: []string{SuiteVectors}, Primitives: []string{PrimTokenBucket}, Vectors: files})
	var out bytes.Buffer
	rep.Print(&out, "")
	r := rep.Results[0]
	if r.Cases != 25 || r.Failed != 1 || r.Failures[0].Case != "mine/wrong-on-purpose" {
		t.Fatalf("want 25 cases with mine/wrong-on-purpose failing:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `want: {"ok":true,"remaining":2}`) || !strings.Contains(out.String(), `got:  {"ok":true,"remaining":3}`) {
		t.Fatalf("report lacks the answers:\n%s", out.String())
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"protocol":1,"primitive":"xx","cases":[]}`), 0o644)
	if _, err := LoadVectors(bad); err == nil || !strings.Contains(err.Error(), "field primitive") {
		t.Errorf("a bad primitive gave %v, want an error naming the field", err)
	}
}
