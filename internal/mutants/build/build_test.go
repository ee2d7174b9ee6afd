package build

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestChildArgs: the child gets this run's test flags, less those that
// select tests or belong to go test's bookkeeping of this binary, and a
// -test.run of exactly the tests that asked.
func TestChildArgs(t *testing.T) {
	got := childArgs([]string{"-test.paniconexit0", "-test.timeout=10m0s", "-test.v=true", "-test.run=^TestX$", "-test.testlogfile=/tmp/x", "-test.skip=Y", "-long"}, []string{"TestA", "TestB.c"})
	want := []string{"-test.paniconexit0", "-test.timeout=10m0s", "-test.v=true", "-long", `-test.run=^(TestA|TestB\.c)$`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("childArgs = %q, want %q", got, want)
	}
	// A test binary run by hand may be given a flag's value as the next
	// argument: the value goes with its flag (left in, it would end the
	// child's flags, and the child would run every test).
	got = childArgs([]string{"-test.run", "^TestX$", "-test.v", "--test.skip", "Y", "-test.count", "1"}, []string{"TestA"})
	want = []string{"-test.v", "-test.count", "1", `-test.run=^(TestA)$`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("childArgs with separate values = %q, want %q", got, want)
	}
}

// TestRoot: the root is found from a package's directory, and outside a
// checkout the error says so.
func TestRoot(t *testing.T) {
	r, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "internal", "mutants", "patches")); err != nil {
		t.Errorf("Root() = %s, which has no internal/mutants/patches", r)
	}
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	if r, err := Root(); err == nil || !strings.Contains(err.Error(), "not inside a checkout of "+Module) {
		t.Errorf("Root() in another module = %q, %v", r, err)
	}
}

// TestInputsKey: the key of a cached overlay changes with a patch, with
// impl/ and with the generator, and not with a test file.
func TestInputsKey(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module "+Module+"\n")
	write("internal/mutants/patches/tb-x.patch", "a")
	write("impl/tokenbucket/trie.go", "package tokenbucket\n")
	write("internal/mutants/internal/generate/generate.go", "package generate\n")
	key := func() string {
		t.Helper()
		k, err := inputsKey(root)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key()
	write("impl/tokenbucket/trie_test.go", "package tokenbucket\n")
	if key() != k0 {
		t.Error("a test file changed the key")
	}
	for _, c := range [][2]string{
		{"internal/mutants/patches/tb-x.patch", "b"},
		{"impl/tokenbucket/trie.go", "package tokenbucket // edited\n"},
		{"internal/mutants/internal/generate/generate.go", "package generate // edited\n"},
	} {
		before := key()
		write(c[0], c[1])
		if key() == before {
			t.Errorf("editing %s left the key as it was", c[0])
		}
	}
}

// TestKeptBinary: a kept binary is built once and not linked again while
// its package is unchanged, and while its stamp matches the go command is
// not even asked (PATH is emptied); a change rebuilds it, and so does a
// stamp that does not match; a run's own link keeps the binary it started
// with when a rebuild replaces the kept file.
func TestKeptBinary(t *testing.T) {
	mod := t.TempDir()
	write := func(msg string) {
		t.Helper()
		src := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Print(" + strconv.Quote(msg) + ") }\n"
		if err := os.WriteFile(filepath.Join(mod, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/kept\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write("one")
	json := filepath.Join(t.TempDir(), "overlay.json")
	build := func() (string, func()) {
		t.Helper()
		run, release, ok, err := keptBinary(json, "cmd_kept", mod, mod, []string{"build"}, ".")
		if !ok {
			t.Skip("this system cannot lock a file: binaries are not kept")
		}
		if err != nil {
			t.Fatal(err)
		}
		return run, release
	}
	output := func(bin string) string {
		t.Helper()
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	kept := filepath.Join(filepath.Dir(json), "bin", "cmd_kept")
	run1, release1 := build()
	if got := output(run1); got != "one" {
		t.Fatalf("first build prints %q, want one", got)
	}
	info1, err := os.Stat(kept)
	if err != nil {
		t.Fatal(err)
	}
	if selfBuildID() == "" {
		t.Fatal("this test binary's build ID cannot be read: no kept binary is ever stamped")
	}
	path := os.Getenv("PATH")
	t.Setenv("PATH", "")
	run2, release2 := build()
	info2, err := os.Stat(kept)
	if err != nil {
		t.Fatal(err)
	}
	// The go command touches an up-to-date file at -o; a new link would
	// be a new file (it renames or removes and writes).
	if !os.SameFile(info1, info2) {
		t.Error("an unchanged package's binary was linked again")
	}
	if run2 == run1 {
		t.Errorf("two runs were given the same file %s", run1)
	}
	release2()
	// A stamp that does not match sends the build to the go command,
	// which cannot be found.
	if err := os.WriteFile(kept+".stamp", []byte("another build"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := keptBinary(json, "cmd_kept", mod, mod, []string{"build"}, "."); err == nil {
		t.Fatal("a kept binary whose stamp does not match was run without asking the go command")
	}
	t.Setenv("PATH", path)
	_, release := build()
	release()
	t.Setenv("PATH", "")
	_, release = build()
	release()
	write("two")
	if _, _, _, err := keptBinary(json, "cmd_kept", mod, mod, []string{"build"}, "."); err == nil {
		t.Fatal("after an edit the kept binary was run without asking the go command")
	}
	t.Setenv("PATH", path)
	run3, release3 := build()
	defer release3()
	if got := output(run3); got != "two" {
		t.Errorf("after an edit the kept binary prints %q, want two", got)
	}
	if got := output(run1); got != "one" {
		t.Errorf("a run's own link prints %q after a rebuild, want one", got)
	}
	release1()
	if _, err := os.Stat(run1); !os.IsNotExist(err) {
		t.Errorf("release left %s behind: %v", run1, err)
	}
}

// TestPrune: beyond the keep most recently used overlays, prune removes
// those not used within inUse, and spares the ones that were (another
// checkout's run may be building with them).
func TestPrune(t *testing.T) {
	base := t.TempDir()
	now := time.Now()
	mkdir := func(name string, age time.Duration) {
		t.Helper()
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(d, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range keep + 2 {
		mkdir(fmt.Sprintf("recent%d", i), time.Duration(i+1)*time.Minute)
		mkdir(fmt.Sprintf("old%d", i), inUse+time.Duration(i+1)*time.Minute)
	}
	prune(base)
	for i := range keep + 2 {
		if _, err := os.Stat(filepath.Join(base, fmt.Sprintf("recent%d", i))); err != nil {
			t.Errorf("an overlay used %d min ago was removed", i+1)
		}
		if _, err := os.Stat(filepath.Join(base, fmt.Sprintf("old%d", i))); err == nil {
			t.Errorf("old%d, unused for more than %v and beyond the %d newest, was kept", i, inUse, keep)
		}
	}
}
