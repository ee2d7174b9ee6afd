// Command gen writes the mutant packages of internal/mutants, one per patch
// in internal/mutants/patches, and internal/sut/tables_gen.go (with
// backends/redissut's and backends/etcdsut's tables_gen.go for the
// server-backed tables), which builds a table of the package a fault
// names. It also removes generated files
// that no patch produces any more. Run it with
//
//	go generate ./internal/mutants
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tollgate/tollgate/internal/mutants/internal/generate"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := generate.Root()
	if err != nil {
		return err
	}
	files, err := generate.Generate(root)
	if err != nil {
		return err
	}
	owned, err := generate.Owned(root)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, f := range files {
		keep[f.Path] = true
		name := filepath.Join(root, filepath.FromSlash(f.Path))
		if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, f.Data) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(name, f.Data, 0o644); err != nil {
			return err
		}
	}
	for _, p := range owned {
		if keep[p] {
			continue
		}
		name := filepath.Join(root, filepath.FromSlash(p))
		if err := os.Remove(name); err != nil {
			return err
		}
		// Remove the directories the removal left empty, up to internal/mutants.
		for dir := filepath.Dir(name); dir != filepath.Join(root, filepath.FromSlash(generate.MutantsDir)); dir = filepath.Dir(dir) {
			if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 || os.Remove(dir) != nil {
				break
			}
		}
	}
	return nil
}
