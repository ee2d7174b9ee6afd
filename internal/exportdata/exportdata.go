// Package exportdata type-checks imports from the compiler's export data,
// which go list -export has the go command write (or find in its build
// cache), instead of from source: the standard library and the module's
// own packages are then read, not type-checked again, on every load.
// It imports nothing of the module's.
package exportdata

import (
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Files runs go list -export -deps on patterns in dir and returns each
// package's export data file by import path. A pattern that does not
// build is an error, with the go command's output.
func Files(dir string, patterns ...string) (map[string]string, error) {
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}"}, patterns...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			err = fmt.Errorf("%v: %s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("go list -export %s: %w", strings.Join(patterns, " "), err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if path, file, ok := strings.Cut(l, "="); ok && file != "" {
			m[path] = file
		}
	}
	return m, nil
}

// Importer imports the packages of files (Files) into fset; importing a
// package files lacks is an error naming it. importMap, if not nil, is
// the importing package's ImportMap (go list): an import path as written
// in its source mapped to the package it resolves to (a vendored copy, a
// test variant).
func Importer(fset *token.FileSet, files, importMap map[string]string) types.Importer {
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if m, ok := importMap[path]; ok {
			path = m
		}
		f := files[path]
		if f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
}
