package fuzz

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

//go:embed testdata/fuzz
var corpus embed.FS

// Targets lists the fuzz targets whose corpora Seeds can read.
var Targets = []string{"FuzzCredits", "FuzzTokenBucket", "FuzzHostile"}

// Seed is one committed corpus entry.
type Seed struct {
	Name  string // file name under testdata/fuzz/<Target>/
	Input []byte
}

// Seeds returns the committed corpus of target, in file name order. Every
// target takes a single []byte argument.
func Seeds(target string) ([]Seed, error) {
	dir := path.Join("testdata/fuzz", target)
	entries, err := fs.ReadDir(corpus, dir)
	if err != nil {
		return nil, fmt.Errorf("fuzz: no corpus for target %q: %w", target, err)
	}
	var out []Seed
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(corpus, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("fuzz: %w", err)
		}
		in, err := parse(data)
		if err != nil {
			return nil, fmt.Errorf("fuzz: %s/%s: %w", dir, e.Name(), err)
		}
		out = append(out, Seed{Name: e.Name(), Input: in})
	}
	return out, nil
}

// parse reads a corpus file holding one []byte value (the go command's
// "go test fuzz v1" format).
func parse(data []byte) ([]byte, error) {
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		return nil, fmt.Errorf("want a \"go test fuzz v1\" header and one []byte value, got %d lines", len(lines))
	}
	v, ok := strings.CutPrefix(lines[1], "[]byte(")
	if v, ok2 := strings.CutSuffix(v, ")"); ok && ok2 {
		s, err := strconv.Unquote(v)
		if err != nil {
			return nil, fmt.Errorf("value %s: %w", lines[1], err)
		}
		return []byte(s), nil
	}
	return nil, fmt.Errorf("value %q is not a []byte literal", lines[1])
}

// Format renders input as a corpus file, the format Seeds reads and the go
// command writes.
func Format(input []byte) []byte {
	return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", input)
}
