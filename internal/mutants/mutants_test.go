// The tests of this package import neither internal/sut nor a mutant
// package, so that they build, and report what to regenerate, even when a
// generated file is missing or broken.

package mutants_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
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

// TestGeneratedFilesAreFresh runs the generator in memory and compares its
// output with the files on disk: a mutant package or tables_gen.go that is
// stale, missing or extra fails, naming the file and the command that
// brings it up to date. A patch that no longer applies to impl/ fails with
// the applier's message.
func TestGeneratedFilesAreFresh(t *testing.T) {
	r := root(t)
	files, err := generate.Generate(r)
	if err != nil {
		t.Fatalf("the mutants cannot be generated:\n%v\nbring the patch up to date with impl/, then run: %s", err, generate.Command)
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
			t.Errorf("%s is not generated from any patch; run %s, which removes it", p, generate.Command)
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

// TestGenerateIsDeterministic: two runs give the same files in the same
// order.
func TestGenerateIsDeterministic(t *testing.T) {
	r := root(t)
	a, err := generate.Generate(r)
	if err != nil {
		t.Skip(err) // TestGeneratedFilesAreFresh reports it
	}
	b, _ := generate.Generate(r)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs of the generator differ")
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
