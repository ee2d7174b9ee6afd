package interleave

import (
	"fmt"
	"strings"

	"github.com/tollgate/tollgate/model"
)

// Generated token-bucket scenarios that race the writes of an inner
// node's child 0, which is the node's first word, with the walks through
// the node, which load that word to tell the node's kind
// (impl/tokenbucket/trie.go). The pairs and triples of sysTokenBucket start
// from tries of two keys that share one node below the root, so no
// push-down ever moves a cell out of child 0 while another thread walks
// through the node, no compaction meets an insert into an empty child 0 or
// a push-down of it, no frozen word holds an inner node, no compaction
// keeps a copy of its node that another thread then walks or compacts,
// and no replacement pulls a cell up through two levels while another
// thread walks them. These families fill those holes of the interleaving
// coverage (spec/explore-site-pairs.md).

// genPush and genMid are the keys of these families beyond k and j: p
// shares one more level with k, so its insert pushes k's cell down; m
// shares the node k and j differ in, at a word of its own.
const (
	genPush = "p"
	genMid  = "m"
)

// tbTriePrefix is a trie shape the setup leaves, with every key's hash
// (the families' keys: k, j, m, p), and the races run from it.
type tbTriePrefix struct {
	name, state string
	setup       []model.TBInput[string]
	now         int64
	hashes      map[string]uint64
	races       []tbTrieRace
}

// tbTrieRace is one scenario of a prefix: its threads, each "OP" or
// "OP.KEY", or several joined by "+" run one after the other; within,
// when above 0, the most preemptions it is explored within (Within).
type tbTrieRace struct {
	threads []string
	within  int
}

// tbTrieHashes are the keys' hashes, one shape for every prefix: k, j, m
// and p share the root's child (1) and a 16-way node below it (child 0),
// whose one child is a 16-way node at level 2 where k is child 0 (so that
// node's first word is k's child word), j child 1 and m child 2; p shares
// that word with k and differs from it at level 3, so p's insert pushes
// k's cell down into a new inner node whose child 0 it is again.
var tbTrieHashes = map[string]uint64{genKey: 0x0001, genOther: 0x0101, genMid: 0x0201, genPush: 0x1001}

// tbTriePrefixes are the shapes and their races. From fold, k's cell is
// child 0 of the level-2 node and j its child 1, j full at 2 ms and k at
// 3: p's take pushes k's cell down while a reset of k (whose walk loads
// the node's first word and whose unlink writes it) or a take of m (whose
// walk loads it too) goes on; two reclaims, at 2 and 3 ms, compact the
// node and the one above it while p's take pushes k's cell down, so a
// frozen word holds an inner node and a compaction keeps a copy that the
// other reclaim sweeps and compacts; and a reclaim meets m's insert and
// k's take. From hole, child 0 is empty and j and m are the node's cells,
// j full at 2 ms and m at 3: a reclaim at 2 ms forgets j and compacts the
// node to m's cell, and the node above it to the same, while k's take
// inserts into child 0 (the compaction then finds two chains and keeps a
// copy, or freezes the word first, and the insert helps it and walks again
// from the root), followed by a reset of k, whose walk and unlink meet the
// copy, or against a second reclaim at 3 ms that sweeps the copy and
// compacts it again, or against p's take, which pushes k's new cell down
// in the node being compacted. From kept, the same node with nothing to
// forget at 2 ms: the reclaim's sweep of the node above loads this node's
// first word, which k's insert into child 0 then writes.
//
// Two races put a reclaim against operations on two keys, and two race two
// reclaims, which heldReclaims holds back elsewhere; these pass on the
// real code: the reclaim at 2 ms can forget j's bucket alone, the one at
// 3 ms j's and one other (k's or m's), and the buckets the threads' takes
// make none of them, so every outcome is one of an atomic order.
//
// The races with three threads run within one preemption (Within), and so
// did hole's reclaim against take.k then reset.k until a lookup that read a
// frozen word holding an inner node as an absent key survived the default
// run (tb-find-wrapped-inner): at two preemptions that race takes 3,149
// schedules (2.1 s), against about 600 at one, and fails the mutant. At
// two, hole's reclaim against take.k and p's take
// takes 22,070 schedules (against 428), and covers one pair more (a
// freeze's second load of a word, then a push-down of it). Measured and
// left out, at bound 1 unless said: from fold, from a 16-way node right
// below the root (k 0x001, j 0x011, p 0x101) and from a 4-way node at
// level 3 (k 0x0001, j 0x1001, p 0x4001), every ordered pair of take.p,
// take.k, peek.k, reset.k, take.m, take.j, reset.j and reclaim; from fold
// and the level-3 node, the reclaim against take.m then peek.k, take.p
// then peek.k or reset.k, take.m then reset.k, reset.k then take.k, and
// against take.p and reset.k, take.m and peek.k, take.p and peek.k as two
// threads; fold's first races, the reclaim against take.p and against
// reset.k (2,324 schedules at bound 2). None covers a pair these do not,
// but the level-3 node's reclaim against take.m and take.k (one: a
// replacement, then sparse's load of the replaced node's first word; 518
// schedules) and, at bound 2, fold's reclaim against take.p and reset.k
// (two: a push-down of child 0, then a walk that loads the node through a
// frozen word; 20,270 schedules) and hole's reclaim against take.k (two:
// cellOf's and isFrozen's loads of the node's first word, then k's insert
// into child 0; 1,997 schedules).
func tbTriePrefixes() []tbTriePrefix {
	k, j, m := genKey, genOther, genMid
	return []tbTriePrefix{
		{"fold", "k, j, m and p share the root's child and a 16-way node below it, whose one child is the node they differ in; k is its child 0 and j its child 1, j full at 2 ms and k at 3: a reclaim at 2 ms forgets j and compacts that node to k's cell, and then the node above it, which held only that",
			[]model.TBInput[string]{tbTake(j, 2, 0), tbTake(k, 1, 2)}, 2, tbTrieHashes,
			[]tbTrieRace{{[]string{"take.p", "reset.k"}, 0}, {[]string{"take.p", "take.m"}, 0},
				{[]string{"reclaim", "reclaim", "take.p"}, 1}, {[]string{"reclaim", "take.m", "take.k"}, 1}}},
		{"hole", "k, j, m and p share the root's child and a 16-way node below it, whose one child is the node they differ in; its child 0, k's word, is empty, j is its child 1, full at 2 ms, and m its child 2, full at 3: a reclaim at 2 ms forgets j and compacts that node to m's cell, and then the node above it, which held only that",
			[]model.TBInput[string]{tbTake(j, 2, 0), tbTake(m, 1, 2)}, 2, tbTrieHashes,
			[]tbTrieRace{{[]string{"reclaim", "take.k+reset.k"}, 0},
				{[]string{"reclaim", "reclaim", "take.k"}, 1}, {[]string{"reclaim", "take.k", "take.p"}, 1}}},
		{"kept", "k, j, m and p share the root's child and a 16-way node below it, whose one child is the node they differ in; its child 0, k's word, is empty, j is its child 1 and m its child 2, neither full before 3 ms: a reclaim at 2 ms forgets nothing and compacts nothing",
			[]model.TBInput[string]{tbTake(j, 1, 2), tbTake(m, 1, 2)}, 2, tbTrieHashes,
			[]tbTrieRace{{[]string{"reclaim", "take.k"}, 0}}},
	}
}

// tbTrieGenerated is the scenario of prefix p whose thread t does ops[t]
// (tbTrieRace), at p's clock for the first thread and a millisecond later
// for the others.
func tbTrieGenerated(p tbTriePrefix, ops ...string) generated {
	var threads [][]model.TBInput[string]
	var race []string
	for t, op := range ops {
		var thread []model.TBInput[string]
		for _, step := range strings.Split(op, "+") {
			name, key, _ := strings.Cut(step, ".")
			in := tbOp(name, key, p.now+int64(min(t, 1)))
			thread = append(thread, in)
			race = append(race, fmt.Sprintf("T%d %s", t, in))
		}
		threads = append(threads, thread)
	}
	s := TokenBucketScenario("sys-tb-"+p.name+"-"+strings.Join(ops, "-"),
		"generated: "+p.state+"; "+strings.Join(race, ", "), nil, p.setup, threads...)
	return generated{Scenario: s.Hashes(p.hashes), prefix: p.name}
}

// sysTbTrie is the scenarios of these families: every race of every
// prefix.
func sysTbTrie() []generated {
	var out []generated
	for _, p := range tbTriePrefixes() {
		for _, r := range p.races {
			g := tbTrieGenerated(p, r.threads...)
			if r.within > 0 {
				g.Scenario = g.Within(r.within)
			}
			out = append(out, g)
		}
	}
	return out
}
