package build

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
