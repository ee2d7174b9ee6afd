// Package layout is how the interleaving explorer (internal/interleave) sees
// the tables it drives: the words each one holds at fixed places and their
// names, the structure of a token-bucket trie, the fields of a credit
// table's payload box, and the hook that pins a trie's hash.
//
// The tables are the hooked copies of impl/ (internal/mutants/explored and
// every mutant), and go generate (internal/mutants/gen) writes the code
// behind these interfaces into each copy, layout.go, against the copy's own
// fields. So a field of impl/ that is renamed, or a word that is added or
// removed, fails go generate or the copy's build, not an exploration.
//
// Names serve traces only. Which steps of a run conflict is decided by the
// addresses the hooked operations report (spec/explore.md §5), never by a
// name, so a word this package does not name is still compared exactly.
//
// Every read here is an atomic load without a switch point, but for
// Word.Load and Tries.LoadState, which call the word's own Load method: the
// explorer calls them only where no switch can happen, in the direct mode
// of a run's setup and final checks.
package layout

import (
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// A Table is a table of a hooked copy of impl/.
type Table interface {
	// Layout describes the table. It allocates nothing: the Layout is the
	// table itself, seen through another type.
	Layout() Layout
}

// A Layout describes one table. A credit table's also implements Boxes, a
// token-bucket table's Tries.
type Layout interface {
	// Base is the table's address: a word's place in it is its address
	// minus Base, the same in every table of the type.
	Base() unsafe.Pointer
	// Words lists the words at fixed places in the table, in the order of
	// their fields. It allocates their names.
	Words() []Word
}

// A Word is one hooked word at a fixed place in a table.
type Word struct {
	// Name is the word's place in the table, in Go's syntax for it:
	// "slots[26].word", "closed", "buckets".
	Name string
	Addr unsafe.Pointer
	// Load calls the word's Load method and returns what it returns: *T
	// for a Pointer, uint64, bool, or {lo, hi} for a Pair.
	Load func() any
}

// PointerWord describes the hooked pointer p, named name.
func PointerWord[T any](name string, p *hooked.Pointer[T]) Word {
	return Word{Name: name, Addr: unsafe.Pointer(p), Load: func() any { return p.Load() }}
}

// Uint64Word describes the hooked counter u, named name.
func Uint64Word(name string, u *hooked.Uint64) Word {
	return Word{Name: name, Addr: unsafe.Pointer(u), Load: func() any { return u.Load() }}
}

// BoolWord describes the hooked flag b, named name.
func BoolWord(name string, b *hooked.Bool) Word {
	return Word{Name: name, Addr: unsafe.Pointer(b), Load: func() any { return b.Load() }}
}

// PairWord describes the hooked 128-bit word p, named name.
func PairWord(name string, p *hooked.Pair) Word {
	return Word{Name: name, Addr: unsafe.Pointer(p), Load: func() any {
		lo, hi := p.Load()
		return [2]uint64{lo, hi}
	}}
}

// Boxes reads the payload boxes of a credit table.
type Boxes interface {
	// Box reports whether v, a value of a box word, is a box, and reads it
	// if it is not nil.
	Box(v any) (b Box, ok bool)
}

// A Box is what a payload box of a credit table holds, but for its
// published flag (a word of its own).
type Box struct {
	Gen      uint64 // the generation of the enqueue that made it
	Payload  any
	MarkedMs int64 // when the payload was enqueued
	// Fields are the addresses of the box's fields, by field name (gen,
	// markedMs, payload, published), so that a trace can name a store to
	// one of them.
	Fields []Field
}

// A Field is one field of a heap object, by name and address.
type Field struct {
	Name string
	Addr unsafe.Pointer
}

// Tries reads the tries of a token-bucket table and pins their hash.
// Tries and their nodes are passed by address, unsafe.Pointer values of
// the copy's *trie and *node; every pointer word is read without a switch
// point.
type Tries interface {
	// Buckets is the address of the table's word that holds its trie.
	Buckets() unsafe.Pointer
	// Trie returns the trie that word holds.
	Trie() unsafe.Pointer
	// IsTrie reports whether v, a value of a buckets word, is a trie, and
	// returns its address.
	IsTrie(v any) (trie unsafe.Pointer, ok bool)
	// SetHash makes trie hash every key with hash (the explorer's keys are
	// strings). It panics for a table whose keys are not strings.
	SetHash(trie unsafe.Pointer, hash func(string) uint64)
	// Root, Floor, Sealed and Frozen return the trie's root node, the
	// address of its floor word, its sealed marker and its frozen marker
	// (the first word of every frozen wrapper).
	Root(trie unsafe.Pointer) unsafe.Pointer
	Floor(trie unsafe.Pointer) unsafe.Pointer
	Sealed(trie unsafe.Pointer) unsafe.Pointer
	Frozen(trie unsafe.Pointer) unsafe.Pointer
	// Fanout is the number of children of an inner node at level (the
	// root's is 0).
	Fanout(level int) int
	// Index is the child of an inner node at level that hash h descends to.
	Index(h uint64, level int) int
	// First returns the value of a node's first word: the node itself for
	// a cell, the frozen marker for a frozen wrapper, child 0 for an inner
	// node.
	First(node unsafe.Pointer) unsafe.Pointer
	// Child returns the address of child word j of an inner node and the
	// node it holds.
	Child(node unsafe.Pointer, j int) (word, child unsafe.Pointer)
	// IsNode reports whether v, a value of a child or next word, is a
	// node, and returns its address.
	IsNode(v any) (node unsafe.Pointer, ok bool)
	// Key renders a cell's key.
	Key(cell unsafe.Pointer) string
	// Next returns the address of a cell's next word and the node it
	// holds, or of a frozen wrapper's value word and the node it froze.
	Next(cell unsafe.Pointer) (word, next unsafe.Pointer)
	// State returns the address of a cell's bucket word.
	State(cell unsafe.Pointer) unsafe.Pointer
	// LoadState loads a cell's bucket word through its Load method.
	LoadState(cell unsafe.Pointer) (lo, hi uint64)
}
