package generate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlainStores checks which stores of a hooked table file become switch
// points: every one that may reach shared memory, and none that provably
// writes the running call's own memory.
func TestPlainStores(t *testing.T) {
	const mod = "example.com/m"
	src := `package tab

import "example.com/m/internal/seam"

type counts struct{ free, used int }

type Snapshot struct{ General counts; Closed bool }

type box struct {
	n    int
	flag seam.Bool
	list []int
}

type Table struct{ boxes []*box; last int }

func (t *Table) fill(b *box, v int, out []int, fresh **box) Snapshot {
	var s Snapshot
	var arr [4]int
	c := &s.General
	nb := &box{}
	own := counts{}
	s.Closed = true
	c.free++
	arr[1] = v
	own.used = v
	x := v
	x = v + 1
	_ = x
	b.n = v
	b.list[0] = v
	nb.n = v
	out[v] = x
	t.last += v
	*fresh = nb
	s.General.used, b.n = v, v
	return s
}
`
	got, err := copyTable("", mod, "tab.go", []byte(strings.Replace(src, "internal/seam", "internal/seam", 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	text := string(got)
	for _, want := range []string{
		"seam.PlainStore(&b.n)\n\tb.n = v",
		"seam.PlainStore(&b.list[0])\n\tb.list[0] = v",
		"seam.PlainStore(&nb.n)\n\tnb.n = v",
		"seam.PlainStore(&out[v])\n\tout[v] = x",
		"seam.PlainStore(&t.last)\n\tt.last += v",
		"seam.PlainStore(fresh)\n\t*fresh = nb",
		"seam.PlainStore(&b.n)\n\ts.General.used, b.n = v, v",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the copy lacks %q:\n%s", want, text)
		}
	}
	for _, own := range []string{"&s.Closed", "&c.free", "&arr[1]", "&own.used", "&x", "&s.General.used"} {
		if strings.Contains(text, "seam.PlainStore("+own+")") {
			t.Errorf("the copy makes a store to the call's own memory a switch point: %s\n%s", own, text)
		}
	}
	if n := strings.Count(text, "seam.PlainStore("); n != 7 {
		t.Errorf("%d stores instrumented, want 7:\n%s", n, text)
	}

	// A file that does not import the seam is left alone.
	plain := strings.Replace(src, `import "example.com/m/internal/seam"`, "", 1)
	plain = strings.Replace(plain, "flag seam.Bool", "flag bool", 1)
	got, err = copyTable("", mod, "tab.go", []byte(plain), nil)
	if err != nil || strings.Contains(string(got), "PlainStore") {
		t.Errorf("a file without the seam: err %v, instrumented: %v", err, strings.Contains(string(got), "PlainStore"))
	}

	// A shared store in a header, where no call can precede it, is refused.
	header := strings.Replace(src, "\tb.n = v\n", "\tif b.n = v; v > 0 {\n\t}\n", 1)
	if _, err := copyTable("", mod, "tab.go", []byte(header), nil); err == nil || !strings.Contains(err.Error(), "outside a statement list") {
		t.Errorf("a store in an if header: err %v, want a refusal", err)
	}
}

// TestSharedIdents: a variable named alone that another thread may reach,
// a package-level one or one a function literal captured, is a plain store
// and a plain load of the explored copy, as a field through a pointer is;
// a local of the call's own, declared by the function that makes the
// literal, is not. (Before, a package variable or a captured one was
// taken to be nobody else's: a memo or a counter kept there by a change to
// a table would have passed the explorer's race detector unseen.)
func TestSharedIdents(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	const target = "impl/tokenbucket/tokenbucket.go"
	src, err := os.ReadFile(filepath.Join(root, target))
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, `
var lastCount int

func (tr *trie[K]) counter() func() int {
	n := 0
	var pair [2]int
	return func() int {
		n++
		lastCount = n
		pair[1] = n
		return lastCount + pair[0]
	}
}
`...)
	got, err := copyTable(root, "github.com/tollgate/tollgate", target, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := string(got)
	for _, want := range []string{
		"seam.PlainStore(&n)\n\t\t(*seam.PlainLoad(&n))++", // a read-modify-write: a load and a store
		"seam.PlainStore(&lastCount)\n\t\tlastCount = (*seam.PlainLoad(&n))",
		"seam.PlainStore(&pair[1])\n\t\tpair[1] = (*seam.PlainLoad(&n))",
		"return (*seam.PlainLoad(&lastCount)) + (*seam.PlainLoad(&pair[0]))",
		"\tn := 0\n",
	} {
		if !strings.Contains(text, want) {
			i := strings.Index(text, "var lastCount")
			t.Errorf("the copy lacks %q:\n%s", want, text[max(i, 0):])
		}
	}
	// The same store in an if header, where no call can precede it, is
	// refused.
	header := strings.Replace(string(src), "\t\tlastCount = n\n", "\t\tif lastCount = n; n > 0 {\n\t\t}\n", 1)
	if _, err := copyTable(root, "github.com/tollgate/tollgate", target, []byte(header), nil); err == nil || !strings.Contains(err.Error(), "outside a statement list") {
		t.Errorf("a store to a package variable in an if header: err %v, want a refusal", err)
	}
}
