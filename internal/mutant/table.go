package mutant

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tollgate/tollgate/internal/fault"
)

// ListCommand is the command that writes the README's mutant tables, and
// RewriteCommand the one that rewrites them in README.md, as messages say
// them.
const (
	ListCommand    = "go run ./cmd/tollgate mutants --list"
	RewriteCommand = ListCommand + " -readme README.md"
)

// WriteTables writes the README's mutant tables from the patches' headers
// (fault.Table): the in-memory faults fs with a column per layer of layers,
// then, when redis is set, a blank line and the table of the server-backed
// faults, Redis and etcd (fault.ServerTable).
func WriteTables(w io.Writer, fs []fault.Fault, layers []string, redis bool) error {
	if err := fault.Table(w, fs, layers); err != nil {
		return err
	}
	if !redis {
		return nil
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return fault.ServerTable(w, fault.AllServer())
}

// Tables returns the README's two mutant tables, every fault and every
// layer, one string of lines each.
func Tables() []string {
	var mem, redis strings.Builder
	_ = fault.Table(&mem, fault.All(), fault.Layers())
	_ = fault.ServerTable(&redis, fault.AllServer())
	return []string{mem.String(), redis.String()}
}

// ReplaceTables returns doc, a markdown document, with each table of
// Tables put in place of the table of doc that starts with the same header
// row. It fails when doc has no such table.
func ReplaceTables(doc []byte) ([]byte, error) {
	lines := strings.Split(string(doc), "\n")
	for _, t := range Tables() {
		rows := strings.Split(strings.TrimSuffix(t, "\n"), "\n")
		start := -1
		for i, l := range lines {
			if l == rows[0] {
				start = i
				break
			}
		}
		if start < 0 {
			return nil, fmt.Errorf("no table whose header is %q", rows[0])
		}
		end := start
		for end < len(lines) && strings.HasPrefix(lines[end], "|") {
			end++
		}
		lines = append(lines[:start], append(rows, lines[end:]...)...)
	}
	return []byte(strings.Join(lines, "\n")), nil
}

// RewriteReadme puts Tables in place of the mutant tables of the markdown
// file at path, and reports whether that changed it.
func RewriteReadme(path string) (changed bool, err error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	out, err := ReplaceTables(doc)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, doc) {
		return false, nil
	}
	return true, os.WriteFile(path, out, 0o644)
}
