package gcstress

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestHiddenPointer is the bug gcstress exists to expose, planted: the
// only pointer to a string's bytes is kept where the collector does not
// look (in memory allocated without pointers), so a collection frees the
// bytes while the test still reads them. It runs only as the child of
// TestChildSeesFreedMemory.
func TestHiddenPointer(t *testing.T) {
	if os.Getenv(mark) != t.Name() {
		t.Skip("the planted bug of TestChildSeesFreedMemory; it runs only as that test's child")
	}
	const want = "a payload long enough not to be a tiny allocation"
	for i := range 50 {
		hidden := make([]uint64, 1) // noscan: the collector never reads it
		b := []byte(strings.Clone(want))
		*(*unsafe.Pointer)(unsafe.Pointer(&hidden[0])) = unsafe.Pointer(&b[0])
		b = nil
		runtime.GC()
		p := *(*unsafe.Pointer)(unsafe.Pointer(&hidden[0]))
		if got := unsafe.String((*byte)(p), len(want)); got != want {
			t.Fatalf("round %d: read %q back, want %q", i, got, want)
		}
	}
}

// TestChildSeesFreedMemory: the child runs under Settings, and a test that
// reads an object the collector freed fails there.
func TestChildSeesFreedMemory(t *testing.T) {
	if underSettings() {
		t.Skip("already under Settings: this test checks the child it starts")
	}
	out, _, err := run("TestHiddenPointer")
	if err == nil {
		t.Fatalf("the child read freed memory back intact; its output:\n%s", out)
	}
	// The child sees the freed bytes clobbered, or, with checkptr (-race)
	// or a sweep that got there first, the runtime itself reports the
	// pointer to freed memory.
	seen := false
	for _, sign := range []string{"\\xde", "found bad pointer in Go heap", "found pointer to free object"} {
		seen = seen || strings.Contains(string(out), sign)
	}
	if !seen {
		t.Errorf("the child failed, but not by reading freed memory:\n%s", out)
	}
}

func TestRunPattern(t *testing.T) {
	for name, want := range map[string]string{
		"TestA":          "^TestA$",
		"TestA/sub.1":    `^TestA$/^sub\.1$`,
		"TestA/x[y]/(z)": `^TestA$/^x\[y\]$/^\(z\)$`,
	} {
		if got := runPattern(name); got != want {
			t.Errorf("runPattern(%q) = %q, want %q", name, got, want)
		}
	}
}
