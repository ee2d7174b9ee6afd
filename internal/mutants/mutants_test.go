package mutants_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/mutants/internal/generate"
	"github.com/tollgate/tollgate/internal/mutants/patch"
)

func root(t *testing.T) string {
	t.Helper()
	r, err := generate.Root()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCommittedFilesAreFresh runs the generator's committed part in
// memory (generate.Committed: the explorer's copies of impl/ and the
// constructors files without mutants) and compares it with the files on
// disk: a file that is stale, missing or extra fails, naming the file and
// the command that brings it up to date.
func TestCommittedFilesAreFresh(t *testing.T) {
	r := root(t)
	files, err := generate.Committed(r)
	if err != nil {
		t.Fatalf("the committed files cannot be generated:\n%v", err)
	}
	owned, err := generate.Owned(r)
	if err != nil {
		t.Fatal(err)
	}
	generated := map[string]bool{}
	for _, f := range files {
		generated[f.Path] = true
		disk, err := os.ReadFile(filepath.Join(r, filepath.FromSlash(f.Path)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			t.Errorf("%s is missing; run: %s", f.Path, generate.Command)
		case err != nil:
			t.Error(err)
		case !bytes.Equal(disk, f.Data):
			t.Errorf("%s is stale (%s); run: %s", f.Path, firstDifference(disk, f.Data), generate.Command)
		}
	}
	for _, p := range owned {
		if !generated[p] {
			t.Errorf("%s is not generated any more; run %s, which removes it", p, generate.Command)
		}
	}
}

// TestOverlayBuilds: every patch applies to impl/ and every mutant
// package, with the constructors files that link them all, compiles
// through the overlay (internal/mutants/build). The overlay is the one
// the layers' tests use (build.Cached), and the go build cache keeps the
// compiled packages, so once built this costs a link-free cache lookup.
func TestOverlayBuilds(t *testing.T) {
	r := root(t)
	json, err := build.Cached(r)
	if err != nil {
		t.Fatalf("the mutants cannot be generated:\n%v\nbring the patch up to date with impl/", err)
	}
	cmd := exec.Command("go", "build", "-overlay", json, "./internal/sut", "./backends/redissut", "./backends/etcdsut", "./internal/mutants/build")
	cmd.Dir = r
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build with the mutants' overlay: %v\n%s", err, out)
	}
	var names []string
	for _, f := range fault.Every() {
		names = append(names, f.String())
	}
	data, err := os.ReadFile(json)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if !strings.Contains(string(data), "internal/mutants/"+n+"/") {
			t.Errorf("the overlay has no package for %s", n)
		}
	}
}

// firstDifference describes the first line at which the file on disk and
// the generated one differ.
func firstDifference(disk, gen []byte) string {
	d, g := strings.Split(string(disk), "\n"), strings.Split(string(gen), "\n")
	for i := 0; ; i++ {
		switch {
		case i == len(d) && i == len(g):
			return "they differ"
		case i == len(d):
			return fmt.Sprintf("line %d: on disk the file ends; generated %q", i+1, g[i])
		case i == len(g):
			return fmt.Sprintf("line %d: on disk %q; generated, the file ends", i+1, d[i])
		case d[i] != g[i]:
			return fmt.Sprintf("line %d: on disk %q, generated %q", i+1, d[i], g[i])
		}
	}
}

// TestPatchesMatchFaults: every fault has a patch named after it, every
// patch names a fault, and each patch touches only its fault's package
// (fault.Package) and names in its comment an invariant of that primitive.
func TestPatchesMatchFaults(t *testing.T) {
	dir := filepath.Join(root(t), filepath.FromSlash(generate.PatchesDir))
	for _, f := range fault.Every() {
		if _, err := os.Stat(filepath.Join(dir, f.String()+".patch")); err != nil {
			t.Errorf("fault %v has no patch: %v", f, err)
		}
	}
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		base := filepath.Base(name)
		f, err := fault.Parse(strings.TrimSuffix(base, ".patch"))
		if !strings.HasSuffix(base, ".patch") || err != nil {
			t.Errorf("%s/%s names no fault (%v)", generate.PatchesDir, base, err)
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := patch.Parse(generate.PatchesDir+"/"+base, data)
		if err != nil {
			t.Error(err)
			continue
		}
		pkg, inv := f.Package()+"/", regexp.MustCompile(`\bT([1-9]|1[012])\b`)
		if f.Credits() {
			inv = regexp.MustCompile(`\bC([1-9]|1[0-6])\b`)
		}
		for _, pf := range p.Files {
			if !strings.HasPrefix(pf.Path, pkg) || strings.Contains(strings.TrimPrefix(pf.Path, pkg), "/") {
				t.Errorf("%s patches %s; a mutant of %s patches only %s", p.Name, pf.Path, f.Package(), pkg)
			}
		}
		if !strings.HasPrefix(p.Comment, f.String()+": ") || !inv.MatchString(p.Comment) {
			t.Errorf("%s: its comment must start with %q and name the invariant it breaks:\n%s", p.Name, f.String()+": ", p.Comment)
		}
	}
}
