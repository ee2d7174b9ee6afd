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
// explored copy (two pairs of one text, sites on one line, are one entry).
var tbTriePairs = []string{
	"tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl) → tokenbucket (*trie).findHash: f := c.first.Load()",
	"tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl) → tokenbucket (*trie).insertHash: f := c.first.Load()",
	"tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl) → tokenbucket (*trie).sweep: f := c.first.Load()",
	"tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl) → tokenbucket (*trie).tidy: f := c.first.Load()",
	"tokenbucket (*trie).compact: if word.CompareAndSwap(c, &w.node) { → tokenbucket (*trie).sparse: if c.first.Load() != c {",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).compact: c := word.Load()",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).compact: if word.CompareAndSwap(c, &w.node) {",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).findHash: c := n.kid(index(h, d)).Load()",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).findHash: f := c.first.Load()",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).insertHash: c := word.Load()",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).insertHash: f := c.first.Load()",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).sparse: c := n.kid(i).Load()",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).sparse: if c.first.Load() != c {",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).sweep: c := word.Load()",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).sweep: f := c.first.Load()",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).sweep: for x := cellOf(word.Load()); x != nil && x.dead(); x = cellOf(word.Load()) {",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).tidy: c := word.Load()",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).tidy: f := c.first.Load()",
	"tokenbucket (*trie).compact: in.kid(i).Store(kids[i]) → tokenbucket (*trie).unlink: word.CompareAndSwap(&c.node, succ.head())",
	"tokenbucket (*trie).findHash: f := c.first.Load() → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket (*trie).findHash: f := c.first.Load() → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
	"tokenbucket (*trie).insertHash: f := c.first.Load() → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket (*trie).insertHash: f := c.first.Load() → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) { → tokenbucket (*trie).findHash: f := c.first.Load()",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) { → tokenbucket (*trie).insertHash: f := c.first.Load()",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) { → tokenbucket (*trie).isFrozen: return n != nil && n.first.Load() == (*seam.PlainLoad(&t.frozen))",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) { → tokenbucket (*trie).sparse: if c.first.Load() != c {",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) { → tokenbucket (*trie).sweep: f := c.first.Load()",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) { → tokenbucket (*trie).tidy: c := word.Load()",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) { → tokenbucket (*trie).tidy: f := c.first.Load()",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) { → tokenbucket (*trie).unlink: word.CompareAndSwap(&c.node, succ.head())",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) { → tokenbucket cellOf: if f := n.first.Load(); f == n {",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(nil, &fresh.node) { → tokenbucket (*trie).isFrozen: return n != nil && n.first.Load() == (*seam.PlainLoad(&t.frozen))",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(nil, &fresh.node) { → tokenbucket (*trie).sparse: if c.first.Load() != c {",
	"tokenbucket (*trie).insertHash: if word.CompareAndSwap(nil, &fresh.node) { → tokenbucket cellOf: if f := n.first.Load(); f == n {",
	"tokenbucket (*trie).insertHash: in.kid(index((*seam.PlainLoad(&t.hash))((*seam.PlainLoad(&x.key))), d+1)).Store(c) → tokenbucket (*trie).tidy: c := word.Load()",
	"tokenbucket (*trie).insertHash: in.kid(index((*seam.PlainLoad(&t.hash))((*seam.PlainLoad(&x.key))), d+1)).Store(c) → tokenbucket (*trie).tidy: f := c.first.Load()",
	"tokenbucket (*trie).insertHash: in.kid(index((*seam.PlainLoad(&t.hash))((*seam.PlainLoad(&x.key))), d+1)).Store(c) → tokenbucket (*trie).unlink: word.CompareAndSwap(&c.node, succ.head())",
	"tokenbucket (*trie).isFrozen: return n != nil && n.first.Load() == (*seam.PlainLoad(&t.frozen)) → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket (*trie).isFrozen: return n != nil && n.first.Load() == (*seam.PlainLoad(&t.frozen)) → tokenbucket (*trie).compact: if word.CompareAndSwap(c, &w.node) {",
	"tokenbucket (*trie).isFrozen: return n != nil && n.first.Load() == (*seam.PlainLoad(&t.frozen)) → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
	"tokenbucket (*trie).isFrozen: return n != nil && n.first.Load() == (*seam.PlainLoad(&t.frozen)) → tokenbucket (*trie).unlink: word.CompareAndSwap(&c.node, succ.head())",
	"tokenbucket (*trie).sparse: c := n.kid(i).Load() → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket (*trie).sparse: if c.first.Load() != c { → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket (*trie).sparse: if c.first.Load() != c { → tokenbucket (*trie).compact: if word.CompareAndSwap(c, &w.node) {",
	"tokenbucket (*trie).sparse: if c.first.Load() != c { → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
	"tokenbucket (*trie).sparse: if c.first.Load() != c { → tokenbucket (*trie).insertHash: if word.CompareAndSwap(nil, &fresh.node) {",
	"tokenbucket (*trie).sparse: if c.first.Load() != c { → tokenbucket (*trie).unlink: word.CompareAndSwap(&c.node, succ.head())",
	"tokenbucket (*trie).sweep: f := c.first.Load() → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket (*trie).sweep: f := c.first.Load() → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
	"tokenbucket (*trie).sweep: for x := cellOf(word.Load()); x != nil && x.dead(); x = cellOf(word.Load()) { → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket (*trie).tidy: c := word.Load() → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
	"tokenbucket (*trie).tidy: f := c.first.Load() → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket (*trie).tidy: f := c.first.Load() → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
	"tokenbucket (*trie).unlink: word.CompareAndSwap(&c.node, succ.head()) → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
	"tokenbucket (*trie).unlink: word.CompareAndSwap(&c.node, succ.head()) → tokenbucket (*trie).isFrozen: return n != nil && n.first.Load() == (*seam.PlainLoad(&t.frozen))",
	"tokenbucket (*trie).unlink: word.CompareAndSwap(&c.node, succ.head()) → tokenbucket (*trie).sparse: if c.first.Load() != c {",
	"tokenbucket (*trie).unlink: word.CompareAndSwap(&c.node, succ.head()) → tokenbucket cellOf: if f := n.first.Load(); f == n {",
	"tokenbucket cellOf: if f := n.first.Load(); f == n { → tokenbucket (*trie).compact: holder.CompareAndSwap(n.head(), repl)",
	"tokenbucket cellOf: if f := n.first.Load(); f == n { → tokenbucket (*trie).compact: if word.CompareAndSwap(c, &w.node) {",
	"tokenbucket cellOf: if f := n.first.Load(); f == n { → tokenbucket (*trie).insertHash: if word.CompareAndSwap(c, in.head()) {",
	"tokenbucket cellOf: if f := n.first.Load(); f == n { → tokenbucket (*trie).unlink: word.CompareAndSwap(&c.node, succ.head())",
	"tokenbucket newCell: c.first.Store(&c.node) → tokenbucket (*trie).sweep: f = c.first.Load()",
}

// TestTrieFamilies: every scenario of sysTbTrie is in Systematic, and the
// default run's table records each pair of tbTriePairs covered; with
// -long, they pass on the real code at bound 2 (within one preemption, the races
// marked so) and together cover each
// pair of tbTriePairs (familiesCover).
func TestTrieFamilies(t *testing.T) {
	shape := regexp.MustCompile(`\[[^\]]*\]`)
	familiesCover(t, sysTbTrie(), "explored/tokenbucket", func(fn string) string {
		f := shape.ReplaceAllString(fn[strings.LastIndex(fn, "/")+1:], "")
		return strings.Replace(f, ".", " ", 1)
	}, tbTriePairs)
}
