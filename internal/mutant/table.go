package mutant

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tollgate/tollgate/internal/fault"
)

// ListCommand is the command that writes the mutant tables, and
// RewriteCommand the one that rewrites them in docs/checks.md, where they
// live, as messages say them.
const (
	TablesFile     = "docs/checks.md"
	ListCommand    = "go run ./cmd/tollgate mutants --list"
	RewriteCommand = ListCommand + " -readme " + TablesFile
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
// row. It fails when doc has no such table. root is the path from doc's
// directory to the repository's ("..", or "." for a file at the top): the
// tables' links, written from the top, are rewritten to start there.
func ReplaceTables(doc []byte, root string) ([]byte, error) {
	lines := strings.Split(string(doc), "\n")
	for _, t := range Tables() {
		t = relink(t, root)
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

// relink makes the relative links of a table, written from the top of the
// repository, start at root.
func relink(t, root string) string {
	if root == "." || root == "" {
		return t
	}
	var b strings.Builder
	for {
		i := strings.Index(t, "](")
		if i < 0 {
			b.WriteString(t)
			return b.String()
		}
		b.WriteString(t[:i+2])
		t = t[i+2:]
		if !strings.HasPrefix(t, "http") && !strings.HasPrefix(t, "#") {
			b.WriteString(root + "/")
		}
	}
}

// RewriteReadme puts Tables in place of the mutant tables of the markdown
// file at path, and reports whether that changed it.
func RewriteReadme(path string) (changed bool, err error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	root, err := filepath.Rel(filepath.Dir(path), ".")
	if err != nil {
		return false, err
	}
	out, err := ReplaceTables(doc, filepath.ToSlash(root))
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, doc) {
		return false, nil
	}
	return true, os.WriteFile(path, out, 0o644)
}
