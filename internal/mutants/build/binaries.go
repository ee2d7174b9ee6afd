package build

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A kept binary is a test binary or command built with the overlay of the
// mutants, kept beside the overlay (bin/ in its cache directory) under a
// name fixed by its package and build flags. The go command does not link
// again a binary whose file at -o is up to date (its build ID is the one
// the build would give it), so a second run of a package's tests whose
// code has not changed costs the go command's check of the build, not a
// link: a link of a test binary that imports etcd's client is seconds of
// CPU, and every layer's tests link one. The go command decides what is
// up to date; nothing here guesses it.
//
// A build takes the binary's lock (two runs of the same package at once
// take turns), then hard-links the binary to a name of its own that the
// run executes and removes: a build that replaces the kept file while
// another run executes its link leaves that run's file as it was.

// keptBinary builds, with the go command run in dir with args, "-o" and
// the kept file's path, then the package pattern target, the binary named name (a package path
// and what tells the builds apart) under the bin directory beside the
// overlay file json, and returns the path to run and a func that removes
// it. ok is false when this system cannot lock a file: then nothing is
// built and the caller builds into a directory of its own.
func keptBinary(json, name, dir string, args []string, target string) (run string, release func(), ok bool, err error) {
	bin := filepath.Join(filepath.Dir(json), "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", nil, true, err
	}
	kept := filepath.Join(bin, name)
	unlock, ok, err := lockFile(kept + ".lock")
	if !ok || err != nil {
		return "", nil, ok, err
	}
	defer unlock()
	if err := goBuild(dir, append(args, "-o", kept, target)...); err != nil {
		return "", nil, true, err
	}
	f, err := os.CreateTemp(bin, name+".run-")
	if err != nil {
		return "", nil, true, err
	}
	run = f.Name()
	f.Close()
	os.Remove(run)
	if err := os.Link(kept, run); err != nil {
		return "", nil, true, fmt.Errorf("linking the kept binary %s to %s: %w", kept, run, err)
	}
	return run, func() { os.Remove(run) }, true, nil
}

// binaryName names the kept binary of pkg (a slash path relative to the
// root, "." for the root) for this binary's build flags, with kind ("test"
// or "cmd") in front.
func binaryName(kind, pkg string) string {
	h := sha256.Sum256([]byte(strings.Join(buildFlags(), "\x00")))
	return kind + "_" + strings.NewReplacer("/", "_", ".", "_").Replace(pkg) + "_" + hex.EncodeToString(h[:4])
}
