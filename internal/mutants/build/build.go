package build

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/tollgate/tollgate/internal/mutants/internal/generate"
)

// Module is the module path of a tollgate checkout.
const Module = "github.com/tollgate/tollgate"

// Compiled reports whether the mutants are compiled into this binary:
// whether it was built with the overlay Write writes.
func Compiled() bool { return compiled }

// Root returns the root of the tollgate checkout the working directory is
// in: the nearest directory at or above it whose go.mod declares Module.
// The mutants are built from its patches and impl/.
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if mod, err := generate.ModulePath(dir); err == nil && mod == Module {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("the mutants are built from the source of tollgate, and %s is not inside a checkout of %s (no go.mod of that module at or above it): run from a checkout, e.g. git clone and cd into it", wd, Module)
		}
	}
}

// WriteInto writes the mutants of the checkout at root into the existing
// directory dir and returns the path of the overlay file naming them,
// dir/overlay.json.
func WriteInto(root, dir string) (string, error) { return writeAt(root, dir, dir) }

// writeAt writes the mutants into dir and the overlay file naming them as
// they will be once dir is renamed to final.
func writeAt(root, dir, final string) (string, error) {
	files, err := generate.Overlay(root)
	if err != nil {
		return "", err
	}
	replace := map[string]string{}
	for _, f := range files {
		if err := AddFile(replace, root, dir, f.Path, f.Data); err != nil {
			return "", err
		}
		k := filepath.Join(root, filepath.FromSlash(f.Path))
		replace[k] = filepath.Join(final, filepath.Base(replace[k]))
	}
	return filepath.Join(final, "overlay.json"), WriteJSON(filepath.Join(dir, "overlay.json"), replace)
}

// AddFile writes data into dir and records in replace that it stands for
// file (a slash path relative to root) in the build: the one way the
// mutants, tollgate mutants --patch and the automatic campaign give the go
// command a file.
func AddFile(replace map[string]string, root, dir, file string, data []byte) error {
	tmp := filepath.Join(dir, strings.ReplaceAll(file, "/", "_"))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	replace[filepath.Join(root, filepath.FromSlash(file))] = tmp
	return nil
}

// WriteJSON writes the overlay file at path for the replacements replace
// (a file of the module → the file that stands for it).
func WriteJSON(path string, replace map[string]string) error {
	data, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// buildFlags are the build flags of the running binary that a rebuild
// must repeat: the race detector and the build tags.
func buildFlags() []string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	var out []string
	for _, s := range info.Settings {
		switch s.Key {
		case "-race":
			if s.Value == "true" {
				out = append(out, "-race")
			}
		case "-tags":
			out = append(out, "-tags="+s.Value)
		}
	}
	return out
}

// goBuild runs the go command with args in dir, its output to stderr.
func goBuild(dir string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}
