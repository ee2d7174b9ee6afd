package build

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// A kept binary is a test binary or command built with the overlay of the
// mutants, kept beside the overlay (bin/ in its cache directory) under a
// name fixed by its package and build flags. The go command does not link
// again a binary whose file at -o is up to date (its build ID is the one
// the build would give it), so a second run of a package's tests whose
// code has not changed costs the go command's check of the build, not a
// link: a link of a test binary that imports etcd's client is seconds of
// CPU, and every layer's tests link one. The go command decides what is
// up to date, except where the stamp below shows that nothing it would
// read has changed since it last decided.
//
// The go command's check of an up-to-date binary still loads every
// package it links and hashes their files: about 0.7 s of CPU, paid by
// every package whose tests need the mutants, in every run. A stamp beside
// the kept file (name.stamp) records what it was built from: the build ID
// of the binary that asks (its own build, which covers the toolchain, the
// build flags and environment, and every package and module it links), the
// go command's arguments, and a hash of every file of the checkout outside
// .git (sources, embedded files, go.mod, go.sum; the overlay's files are
// keyed by the directory they are in). When the stamp matches, the kept
// binary is the one the go command would leave there, and it is run
// without asking; otherwise the go command builds, and the stamp is
// written only if the checkout hashed the same before and after the build.
// What the stamp cannot see is a package the mutants import that the
// asking binary does not link, edited outside the checkout (in GOROOT or
// the module cache, both read-only in a normal setup).
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
func keptBinary(json, name, root, dir string, args []string, target string) (run string, release func(), ok bool, err error) {
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
	if err := buildStamped(kept, root, dir, args, target); err != nil {
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

// buildStamped builds the kept file unless its stamp says it is up to
// date, and stamps what it built.
func buildStamped(kept, root, dir string, args []string, target string) error {
	stamp := kept + ".stamp"
	before, err := buildStamp(root, dir, args, target)
	if err == nil && before != "" {
		if old, err := os.ReadFile(stamp); err == nil && string(old) == before {
			if _, err := os.Stat(kept); err == nil {
				return nil
			}
		}
	}
	os.Remove(stamp)
	if err := goBuild(dir, append(args, "-o", kept, target)...); err != nil {
		return err
	}
	if after, err := buildStamp(root, dir, args, target); err == nil && after != "" && after == before {
		return os.WriteFile(stamp, []byte(after), 0o644)
	}
	return nil
}

// buildStamp is the stamp of a build by the go command, run in dir with
// args and target, of the checkout at root, asked for by this binary: ""
// when this binary's build ID cannot be read.
func buildStamp(root, dir string, args []string, target string) (string, error) {
	id := selfBuildID()
	if id == "" {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", id, abs, strings.Join(args, "\x00"), target)
	err = hashTree(h, root, root, func(_ string, d fs.DirEntry) bool { return d.IsDir() && d.Name() == ".git" })
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// selfBuildID is the go build ID of the running binary, read from its ELF
// note; "" where it cannot be read (another executable format, or a
// binary built without one).
var selfBuildID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := elf.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil {
		return ""
	}
	data, err := sec.Data()
	// The note: name size, description size, type (4 bytes each), the
	// name "Go\x00\x00", then the description, the build ID.
	if err != nil || len(data) < 16 {
		return ""
	}
	nameSize := int(f.ByteOrder.Uint32(data[0:]))
	descSize := int(f.ByteOrder.Uint32(data[4:]))
	off := 12 + (nameSize+3)&^3
	if nameSize != 4 || string(data[12:14]) != "Go" || off+descSize > len(data) {
		return ""
	}
	return string(data[off : off+descSize])
})

// binaryName names the kept binary of pkg (a slash path relative to the
// root, "." for the root) for this binary's build flags, with kind ("test"
// or "cmd") in front.
func binaryName(kind, pkg string) string {
	h := sha256.Sum256([]byte(strings.Join(buildFlags(), "\x00")))
	return kind + "_" + strings.NewReplacer("/", "_", ".", "_").Replace(pkg) + "_" + hex.EncodeToString(h[:4])
}
