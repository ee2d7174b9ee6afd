package interleave

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// tbTriePairs are the ordered site pairs of the token-bucket trie's child
// words and first words that only the families of generate_tb_trie.go
// cover in the default run (spec/explore-site-pairs.md), each as that
// table names it: the function and the trimmed text of its line in the
// explored copy.
var tbTriePairs = []string{
	"tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl) → tokenbucket (*trie).findHash: f := c.first.Load()",
	"tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl) → tokenbucket (*trie).insertHash: f := c.first.Load()",
	"tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl) → tokenbucket (*trie).tidy: f := c.first.Load()",
	"tokenbucket (*trie).findHash: f := c.first.Load() → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket (*trie).insertHash: f := c.first.Load() → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) { → tokenbucket (*trie).isFrozen: return n != nil && n.first.Load() == (*seam.PlainLoad(&t.frozen))",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) { → tokenbucket (*trie).sparse: if c.first.Load() != c {",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) { → tokenbucket (*trie).sweep: f := c.first.Load()",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) { → tokenbucket cellOf: if f := n.first.Load(); f == n {",
	"tokenbucket (*trie).isFrozen: return n != nil && n.first.Load() == (*seam.PlainLoad(&t.frozen)) → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
	"tokenbucket (*trie).sparse: if c.first.Load() != c { → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
	"tokenbucket (*trie).sweep: f := c.first.Load() → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket (*trie).sweep: f := c.first.Load() → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
	"tokenbucket (*trie).tidy: f := c.first.Load() → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket cellOf: if f := n.first.Load(); f == n { → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
}

// TestTrieFamilies: every scenario of sysTbTrie is in Systematic and
// passes on the real code at bound 2, and together they cover each pair
// of tbTriePairs.
func TestTrieFamilies(t *testing.T) {
	sys := map[string]bool{}
	for _, s := range Systematic() {
		sys[s.Name] = true
	}
	sp := NewSitePairs()
	for _, g := range sysTbTrie() {
		if !sys[g.Name] {
			t.Errorf("%s is not in Systematic", g.Name)
		}
		r := Explore(g.Scenario, Options{Bound: 2, SitePairs: sp})
		if r.Err != nil || r.Failure != nil || !r.Exhaustive {
			t.Fatalf("%s: %s", g.Name, r.Summary())
		}
	}
	files := map[string][]string{}
	shape := regexp.MustCompile(`\[[^\]]*\]`)
	site := func(s Site) string {
		lines, ok := files[s.File]
		if !ok {
			src, err := os.ReadFile(s.File)
			if err != nil {
				t.Fatal(err)
			}
			lines = strings.Split(string(src), "\n")
			files[s.File] = lines
		}
		f := shape.ReplaceAllString(s.Func[strings.LastIndex(s.Func, "/")+1:], "")
		return strings.Replace(f, ".", " ", 1) + ": " + strings.TrimSpace(lines[s.Line-1])
	}
	covered := map[string]bool{}
	for _, p := range sp.Pairs() {
		if strings.Contains(p.First.File, "explored/tokenbucket") {
			covered[site(p.First)+" → "+site(p.Then)] = true
		}
	}
	for _, want := range tbTriePairs {
		if !covered[want] {
			t.Errorf("not covered: %s", want)
		}
	}
}
