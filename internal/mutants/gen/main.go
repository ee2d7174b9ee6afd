// Command gen writes the files of internal/mutants that are committed
// (generate.Committed): the explorer's copies of impl/ under
// internal/mutants/explored, and the constructors files of internal/sut,
// backends/redissut and backends/etcdsut in their form without mutants.
// Nothing it writes comes from a patch. It also removes generated files
// that it no longer writes. Run it with
//
//	go generate ./internal/mutants
//
// With -overlay DIR it writes instead the mutants, built from the patches
// of internal/mutants/patches (internal/mutants/build), into DIR, and
// DIR/overlay.json, which hands them to the go command: go build (or go
// test, go vet) -overlay DIR/overlay.json then compiles every mutant in.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/mutants/internal/generate"
)

func main() {
	overlay := flag.String("overlay", "", "write the mutants and `DIR`/overlay.json for go -overlay, instead of the committed files")
	flag.Parse()
	if err := run(*overlay); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(overlay string) error {
	root, err := build.Root()
	if err != nil {
		return err
	}
	if overlay != "" {
		dir, err := filepath.Abs(overlay)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		json, err := build.WriteInto(root, dir)
		if err != nil {
			return err
		}
		fmt.Println(json)
		return nil
	}
	files, err := generate.Committed(root)
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
		if err := writeIfChanged(filepath.Join(root, filepath.FromSlash(f.Path)), f.Data); err != nil {
			return err
		}
	}
	for _, p := range owned {
		if !keep[p] {
			if err := os.Remove(filepath.Join(root, filepath.FromSlash(p))); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeIfChanged(name string, data []byte) error {
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, data, 0o644)
}
