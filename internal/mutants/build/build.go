package build

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

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

// Rerun builds the command pkg (an import path relative to the root, e.g.
// "./cmd/tollgate") of the checkout at root with the overlay of the
// mutants, runs it with args, standard streams shared, and returns its
// exit status once it exits. The binary is kept (keptBinary): a second
// run from an unchanged checkout neither compiles nor links. An interrupt or a
// termination is passed on to the new binary, which decides what to do
// with it. The binary runs marked (childEnv), so that one which still
// lacks the mutants cannot rebuild itself again.
func Rerun(root, pkg string, args []string) (int, error) {
	if os.Getenv(childEnv) != "" {
		return 0, fmt.Errorf("this binary was rebuilt with the mutants' overlay but they are not compiled in (defect)")
	}
	json, err := Cached(root)
	if err != nil {
		return 0, err
	}
	goArgs := append([]string{"build", "-overlay", json}, buildFlags()...)
	bin, release, ok, err := keptBinary(json, binaryName("cmd", pkg), root, root, goArgs, pkg)
	if err != nil {
		return 0, err
	}
	if !ok {
		dir, err := os.MkdirTemp("", "tollgate-mutants-bin-")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		bin, release = filepath.Join(dir, filepath.Base(pkg)), func() {}
		if err := goBuild(root, append(goArgs, "-o", bin, pkg)...); err != nil {
			return 0, err
		}
	}
	defer release()
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), childEnv+"=1")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sig:
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if code := exit.ExitCode(); code >= 0 {
			return code, nil
		}
		return 1, fmt.Errorf("the rebuilt binary: %v", err)
	}
	return 0, err
}
