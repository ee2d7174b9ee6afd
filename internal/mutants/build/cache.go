package build

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// inputs are the directories (relative to the root, walked whole) and
// files whose contents the mutants are generated from: the patches, the
// packages of impl/ they copy or alias, the interfaces the copies
// implement, and the generator itself. A cached overlay is keyed by all of
// them.
var inputs = []string{
	"go.mod",
	"impl",
	"internal/layout",
	"internal/seam",
	"internal/mutants/patches",
	"internal/mutants/patch",
	"internal/mutants/build",
	"internal/mutants/internal/generate",
}

// keep is how many cached overlays Cached keeps (the most recently used),
// with their kept binaries (keptBinary: about 300 MB of test binaries per
// overlay, twice that with the race detector's); one used within inUse is
// kept too, whatever the count, so that a run in another checkout never
// finds the overlay it is building with removed under it.
const (
	keep  = 4
	inUse = time.Hour
)

// Cached returns the overlay file of the mutants of the checkout at root,
// generated once per state of its inputs and kept in the user's cache
// directory (tollgate/mutants/<key> under os.UserCacheDir), as the go
// command keeps its build cache: generating the mutants type-checks impl/
// and its imports from source (seconds of CPU), and every layer's tests
// and every rebuild of tollgate ask for the same overlay. The key is a
// hash of root and of every file the generator reads, so an edit of a
// patch, of impl/ or of the generator makes a new one; the oldest beyond
// a few are removed.
func Cached(root string) (string, error) {
	key, err := inputsKey(root)
	if err != nil {
		return "", err
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("the user cache directory for the mutants' overlay: %w", err)
	}
	base = filepath.Join(base, "tollgate", "mutants")
	dir := filepath.Join(base, key)
	json := filepath.Join(dir, "overlay.json")
	if _, err := os.Stat(json); err == nil {
		now := time.Now()
		os.Chtimes(dir, now, now)
		return json, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	// Write beside, then rename into place: tests of several packages may
	// ask at once, and a reader must never see half an overlay.
	tmp, err := os.MkdirTemp(base, "new-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if _, err := writeAt(root, tmp, dir); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(json); serr != nil {
			return "", err
		}
	}
	prune(base)
	return json, nil
}

// inputsKey hashes root and the names and contents of inputs.
func inputsKey(root string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", root, runtime.Version())
	for _, in := range inputs {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(in))); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(h, "%s: none\x00", in)
			continue
		}
		err := hashTree(h, root, filepath.Join(root, filepath.FromSlash(in)), func(p string, d fs.DirEntry) bool {
			return strings.HasSuffix(p, "_test.go") || strings.Contains(p, string(filepath.Separator)+"testdata"+string(filepath.Separator))
		})
		if err != nil {
			return "", fmt.Errorf("hashing the mutants' inputs: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// hashTree writes into h the slash path (relative to root) and the
// contents of every regular file under dir, in lexical order, leaving out
// what skip names (a directory skipped is skipped whole). A symbolic link
// is hashed as its target's name.
func hashTree(h io.Writer, root, dir string, skip func(path string, d fs.DirEntry) bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip(p, d) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			fmt.Fprintf(h, "-> %s\x00", target)
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(h, f)
		h.Write([]byte{0})
		return err
	})
}

// prune removes all but the keep most recently used overlays under base,
// and those used within inUse.
func prune(base string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	type entry struct {
		name string
		at   time.Time
	}
	var es []entry
	for _, e := range ents {
		if info, err := e.Info(); err == nil && e.IsDir() && !strings.HasPrefix(e.Name(), "new-") {
			es = append(es, entry{e.Name(), info.ModTime()})
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].at.After(es[j].at) })
	for i := keep; i < len(es); i++ {
		if time.Since(es[i].at) < inUse {
			continue
		}
		os.RemoveAll(filepath.Join(base, es[i].name))
	}
}
