package patch

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const target = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"

// onePatch changes "four" to "FOUR" with one line of context each side.
const onePatch = `A comment line.
It may say anything but start a diff.

--- a/f.txt
+++ b/f.txt
@@ -3,3 +3,3 @@
 three
-four
+FOUR
 five
`

func mustParse(t *testing.T, text string) *Patch {
	t.Helper()
	p, err := Parse("x.patch", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func apply(t *testing.T, text, src string) (string, error) {
	t.Helper()
	p := mustParse(t, text)
	if len(p.Files) != 1 {
		t.Fatalf("%d files, want 1", len(p.Files))
	}
	out, err := p.Files[0].Apply("x.patch", []byte(src))
	return string(out), err
}

func TestApplyAtStatedLine(t *testing.T) {
	p := mustParse(t, onePatch)
	if p.Comment != "A comment line.\nIt may say anything but start a diff." {
		t.Errorf("comment %q", p.Comment)
	}
	if p.File("f.txt") == nil || p.File("g.txt") != nil {
		t.Errorf("File lookup: %+v", p.Files)
	}
	got, err := apply(t, onePatch, target)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(target, "four", "FOUR", 1); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestApplyAtUniqueOffset(t *testing.T) {
	got, err := apply(t, onePatch, "zero\nhalf\n"+target)
	if err != nil {
		t.Fatal(err)
	}
	if want := "zero\nhalf\n" + strings.Replace(target, "four", "FOUR", 1); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestApplyRefusesAmbiguousOffset(t *testing.T) {
	src := "x\n" + "three\nfour\nfive\n" + "y\n" + "three\nfour\nfive\n"
	_, err := apply(t, onePatch, src)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v, want an *Error", err)
	}
	if len(e.Others) != 2 || e.Others[0] != 2 || e.Others[1] != 6 || !strings.Contains(err.Error(), "matches at lines 2, 6, so its place is ambiguous") {
		t.Errorf("error %q (others %v)", err, e.Others)
	}
}

func TestApplyNamesTheFirstDifference(t *testing.T) {
	src := strings.Replace(target, "five", "five!", 1)
	_, err := apply(t, onePatch, src)
	want := `x.patch: hunk 1 (@@ -3,3 +3,3 @@) does not apply to f.txt: line 5: expected "five", found "five!"; it matches nowhere else in the file`
	if err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
	_, err = apply(t, onePatch, "one\ntwo\nthree\nfour\n")
	if err == nil || !strings.Contains(err.Error(), `line 5: expected "five", found end of file`) {
		t.Errorf("short file: %v", err)
	}
}

func TestApplyTwoHunksInOrder(t *testing.T) {
	text := `--- a/f.txt
+++ b/f.txt
@@ -1,2 +1,3 @@
 one
+one and a half
 two
@@ -6,2 +7,1 @@
 six
-seven
`
	got, err := apply(t, text, target)
	if err != nil {
		t.Fatal(err)
	}
	if want := "one\none and a half\ntwo\nthree\nfour\nfive\nsix\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// The second hunk may not match before the first one's end.
	swapped := `--- a/f.txt
+++ b/f.txt
@@ -4,1 +4,1 @@
-four
+FOUR
@@ -2,1 +2,1 @@
-two
+TWO
`
	if _, err := apply(t, swapped, target); err == nil || !strings.Contains(err.Error(), "hunk 2") {
		t.Errorf("hunks out of order: %v", err)
	}
}

func TestApplyNoNewlineAtEnd(t *testing.T) {
	text := `--- a/f.txt
+++ b/f.txt
@@ -1,2 +1,2 @@
 a
-b
\ No newline at end of file
+b
`
	got, err := apply(t, text, "a\nb")
	if err != nil || got != "a\nb\n" {
		t.Errorf("adding the newline: %q, %v", got, err)
	}
	if _, err := apply(t, text, "a\nb\n"); err == nil || !strings.Contains(err.Error(), "no newline at end of file") {
		t.Errorf("marker on a file that ends in a newline: %v", err)
	}
	drop := `--- a/f.txt
+++ b/f.txt
@@ -1,2 +1,2 @@
 a
-b
+c
\ No newline at end of file
`
	got, err = apply(t, drop, "a\nb\n")
	if err != nil || got != "a\nc" {
		t.Errorf("dropping the newline: %q, %v", got, err)
	}
}

func TestParseRejects(t *testing.T) {
	for name, text := range map[string]string{
		"no file":      "just words\n",
		"no +++":       "--- a/f\n@@ -1 +1 @@\n-a\n+b\n",
		"no prefix":    "--- f\n+++ f\n@@ -1 +1 @@\n-a\n+b\n",
		"creation":     "--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+a\n",
		"rename":       "--- a/f\n+++ b/g\n@@ -1 +1 @@\n-a\n+b\n",
		"mode":         "diff --git a/f b/f\nold mode 100644\nnew mode 100755\n",
		"short hunk":   "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n",
		"stray line":   "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n*b\n+c\n",
		"bad header":   "--- a/f\n+++ b/f\n@@ -x +1 @@\n-a\n+b\n",
		"no hunks":     "--- a/f\n+++ b/f\n",
		"twice":        "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- a/f\n+++ b/f\n@@ -2 +2 @@\n-c\n+d\n",
		"trailing":     "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\nsomething else\n",
		"empty":        "",
		"line 0 start": "--- a/f\n+++ b/f\n@@ -0,1 +0,1 @@\n-a\n+b\n",
	} {
		if _, err := Parse("x.patch", []byte(text)); err == nil {
			t.Errorf("%s: parsed", name)
		} else if !strings.HasPrefix(err.Error(), "x.patch") {
			t.Errorf("%s: error %q does not name the patch", name, err)
		}
	}
}

func TestParseGitHeaders(t *testing.T) {
	text := "diff --git a/f.txt b/f.txt\nindex 1234567..89abcde 100644\n" + onePatch[strings.Index(onePatch, "---"):]
	got, err := apply(t, text, target)
	if err != nil || got != strings.Replace(target, "four", "FOUR", 1) {
		t.Errorf("%q, %v", got, err)
	}
}

// TestAgreesWithGitApply applies every mutant patch both ways and compares.
func TestAgreesWithGitApply(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob(filepath.Join(root, "internal/mutants/patches/*.patch"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no patches: %v", err)
	}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(filepath.Base(name), data)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		for _, f := range p.Files {
			src, err := os.ReadFile(filepath.Join(root, f.Path))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f.Path)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f.Path), src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(git, "apply", name)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git apply %s: %v\n%s", name, err, out)
		}
		for _, f := range p.Files {
			src, _ := os.ReadFile(filepath.Join(root, f.Path))
			ours, err := f.Apply(p.Name, src)
			if err != nil {
				t.Fatal(err)
			}
			theirs, _ := os.ReadFile(filepath.Join(dir, f.Path))
			if !bytes.Equal(ours, theirs) {
				t.Errorf("%s on %s: the applier and git apply disagree", p.Name, f.Path)
			}
		}
	}
}
