package conform

import (
	"bytes"
	"os"
	"path/filepath"
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
