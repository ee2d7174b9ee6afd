package auto

import (
	"fmt"
	"sort"
	"strings"
)

// The schema build compiles every mutant of a file into one copy of it
// (a mutant schema): each mutated node becomes a choice, at run time,
// between its original and each of its mutations, keyed by the number of
// the active mutant (package active, which reads TOLLGATE_AUTOMUT once).
// So every layer's test binary is built once per campaign, not once per
// mutant, and a mutant costs only the time its tests run. With no mutant
// active the copy behaves as the original; the baseline run checks that.
//
// An expression node becomes a closure called in place,
//
//	func() T { switch automutActive.ID { case 7: return <mutant 7>; … }; return <original> }()
//
// and a statement node an if-else chain (never a switch, so that a break
// inside keeps its target):
//
//	if automutActive.ID == 9 { <mutant 9> } else { <original> }
//
// Nodes nest (a comparison inside a removed statement); the original
// branch of a node holds its children's choices, a mutant's branch the
// plain text of its one change, since only one mutant is active at a time.

// ActivePath is the import path of the package holding the active mutant's
// number, relative to the module path.
const ActivePath = "internal/mutants/auto/active"

// EnvActive is the environment variable that names the active mutant.
const EnvActive = "TOLLGATE_AUTOMUT"

type site struct {
	start, end int
	stmt       bool
	typ        string
	muts       []int // numbers of the mutants at this node
	kids       []*site
	mutants    []*Mutant
}

// Schema returns src (the file's original text) with the mutants ms, each
// numbered nums[i], compiled in. Mutants that are Fixed are left out.
func Schema(mod string, src []byte, ms []Mutant, nums []int) []byte {
	var sites []*site
	byKey := map[string]*site{}
	for i := range ms {
		m := &ms[i]
		if m.Fixed {
			continue
		}
		k := fmt.Sprintf("%d:%d:%v:%v", m.NodeStart, m.NodeEnd, m.Stmt, m.Opaque)
		s := byKey[k]
		if s == nil {
			s = &site{start: m.NodeStart, end: m.NodeEnd, stmt: m.Stmt, typ: m.Type}
			byKey[k] = s
			sites = append(sites, s)
		}
		s.muts = append(s.muts, nums[i])
		s.mutants = append(s.mutants, m)
	}
	if len(sites) == 0 {
		return src
	}
	// Outer nodes first: by start, then longest, then a statement before
	// the expression of the same span (an expression statement's call).
	sort.Slice(sites, func(i, j int) bool {
		a, b := sites[i], sites[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.end != b.end {
			return a.end > b.end
		}
		return a.stmt && !b.stmt
	})
	root := &site{start: 0, end: len(src)}
	stack := []*site{root}
	for _, s := range sites {
		for len(stack) > 1 && s.start >= stack[len(stack)-1].end {
			stack = stack[:len(stack)-1]
		}
		parent := stack[len(stack)-1]
		parent.kids = append(parent.kids, s)
		stack = append(stack, s)
	}
	body := children(src, root)
	return []byte(addImport(mod, body))
}

// children renders s's span with every child node replaced by its choice.
func children(src []byte, s *site) string {
	var b strings.Builder
	at := s.start
	for _, k := range s.kids {
		b.Write(src[at:k.start])
		b.WriteString(choice(src, k))
		at = k.end
	}
	b.Write(src[at:s.end])
	return b.String()
}

// choice renders one node's run-time choice.
func choice(src []byte, s *site) string {
	var b strings.Builder
	if s.mutants[0].Opaque {
		// Two statements, their declarations hoisted (Mutant.Opaque); the
		// original branch is their plain text, with no choice inside.
		b.WriteString(s.mutants[0].SchemaDecl)
		for i, m := range s.mutants {
			fmt.Fprintf(&b, "if automutActive.ID == %d { %s\n} else ", s.muts[i], m.SchemaRepl)
		}
		fmt.Fprintf(&b, "{ %s\n}", s.mutants[0].SchemaOrig)
		return b.String()
	}
	orig := children(src, s)
	if x := s.mutants[0].HeaderX; x != "" {
		// A loop header's x++, x-- or x op= y, as x = <expression>.
		fmt.Fprintf(&b, "%s = func() %s { switch automutActive.ID {", x, s.typ)
		for i, m := range s.mutants {
			fmt.Fprintf(&b, "case %d: return %s\n", s.muts[i], m.HeaderMut)
		}
		fmt.Fprintf(&b, "}; return %s\n}()", s.mutants[0].HeaderOrig)
		return b.String()
	}
	if s.stmt {
		for i, m := range s.mutants {
			v := string(src[s.start:m.Start]) + m.Repl + string(src[m.End:s.end])
			fmt.Fprintf(&b, "if automutActive.ID == %d { %s\n} else ", s.muts[i], v)
		}
		fmt.Fprintf(&b, "{ %s\n}", orig)
		return b.String()
	}
	fmt.Fprintf(&b, "func() %s { switch automutActive.ID {", s.typ)
	for i, m := range s.mutants {
		v := string(src[s.start:m.Start]) + m.Repl + string(src[m.End:s.end])
		fmt.Fprintf(&b, "case %d: return %s\n", s.muts[i], v)
	}
	fmt.Fprintf(&b, "}; return %s\n}()", orig)
	return b.String()
}

// addImport adds the import of package active on the package clause's own
// line, so no later line moves.
func addImport(mod, src string) string {
	i := strings.Index(src, "\npackage ")
	if strings.HasPrefix(src, "package ") {
		i = -1
	} else if i < 0 {
		return src
	}
	eol := strings.IndexByte(src[i+1:], '\n') + i + 1
	return src[:eol] + fmt.Sprintf("; import automutActive %q", mod+"/"+ActivePath) + src[eol:]
}

// Rounds splits mutants into rounds that one schema each can hold: an
// opaque mutant (Mutant.Opaque) shares its round with no mutant whose node
// overlaps its own, except opaque ones of the very same node. Every other
// node nests in or lies apart from every other, as syntax nodes do, and
// needs no split. It returns the indices of ms per round, in order; one
// round when no mutant is opaque.
func Rounds(ms []Mutant) [][]int {
	var rounds [][]int
	conflict := func(a, b *Mutant) bool {
		if !a.Opaque && !b.Opaque {
			return false
		}
		if a.NodeEnd <= b.NodeStart || b.NodeEnd <= a.NodeStart {
			return false
		}
		return !(a.Opaque && b.Opaque && a.NodeStart == b.NodeStart && a.NodeEnd == b.NodeEnd)
	}
	// The nodes that are not opaque first: they never conflict with one
	// another, so they all share the first round.
	order := make([]int, 0, len(ms))
	for i := range ms {
		if !ms[i].Opaque {
			order = append(order, i)
		}
	}
	for i := range ms {
		if ms[i].Opaque {
			order = append(order, i)
		}
	}
next:
	for _, i := range order {
		for r := range rounds {
			ok := true
			for _, j := range rounds[r] {
				if ms[j].File == ms[i].File && conflict(&ms[i], &ms[j]) {
					ok = false
					break
				}
			}
			if ok {
				rounds[r] = append(rounds[r], i)
				continue next
			}
		}
		rounds = append(rounds, []int{i})
	}
	return rounds
}
