package conform

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
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
