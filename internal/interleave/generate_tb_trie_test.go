package interleave

import (
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

// TestTrieFamilies: every scenario of sysTbTrie is in Systematic, and the
// default run's table records each pair of tbTriePairs covered; with
// -long, they pass on the real code at bound 2 and together cover each
// pair of tbTriePairs (familiesCover).
func TestTrieFamilies(t *testing.T) {
	shape := regexp.MustCompile(`\[[^\]]*\]`)
	familiesCover(t, sysTbTrie(), "explored/tokenbucket", func(fn string) string {
		f := shape.ReplaceAllString(fn[strings.LastIndex(fn, "/")+1:], "")
		return strings.Replace(f, ".", " ", 1)
	}, tbTriePairs)
}
