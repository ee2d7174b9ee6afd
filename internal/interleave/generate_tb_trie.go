package interleave

import (
	"fmt"
	"strings"

	"github.com/tollgate/tollgate/model"
)

// Generated token-bucket scenarios that race a compaction of an inner
// node with a push-down into it and with a reset's walk and unlink. The
// pairs and triples of sysTokenBucket start from tries of two keys that
// share one node below the root, so no compaction there ever meets a
// push-down of its child 0 (the node's first word), no frozen word holds
// an inner node, and no compaction's replacement moves a cell up through
// two levels while another thread walks them. These families fill those
// holes of the interleaving coverage (spec/explore-site-pairs.md): from
// a prefix whose reclaim compacts two nodes, one above the other, a
// reclaim races a take that pushes the kept key down, or a reset of it.

// genPush is the key of these families beyond k and j: it shares one
// more level with k, so its insert pushes k's cell down a level.
const genPush = "p"

// tbTriePrefix is a trie shape the setup leaves, with every key's hash
// (the families' keys: k, j, p).
type tbTriePrefix struct {
	name, state string
	setup       []model.TBInput[string]
	now         int64
	hashes      map[string]uint64
}

// tbTriePrefixes are the shapes. k is child 0 of the node it shares with
// j, so that node's first word is k's child word, and p's push-down makes
// an inner node whose child 0 (and first word) is k's cell again; j is
// full at 2 ms, k only at 3 ms, so the reclaim at 2 ms forgets j alone.
//
// Only fold is in the list. Measured with every second thread of
// take.m (a key m, 0x0201, inserted into an empty word of the compacted
// node), take.p, peek.k, take.k, reset.k and a second reclaim: from a
// 16-way node right below the root (k 0x001, j 0x011, p 0x101), 6,762
// schedules covered no pair that fold's take.p and reset.k do not; from a
// 4-way node at level 3 (k 0x0321, j 0x1321, p 0x4321), 26,143 schedules
// covered three more (sparse's loads against another compaction's freeze
// and replacement), too many for the default run; and from fold, take.m,
// peek.k and take.k added none.
func tbTriePrefixes() []tbTriePrefix {
	k, j := genKey, genOther
	return []tbTriePrefix{
		{"fold", "k and j share the root's child and a 16-way node below it, whose one child is the node they differ in, k its child 0; j is full at 2 ms, k at 3: a reclaim at 2 ms forgets j and compacts that node to k's cell, and then the node above it, which held only that",
			[]model.TBInput[string]{tbTake(j, 2, 0), tbTake(k, 1, 2)}, 2,
			map[string]uint64{k: 0x0001, j: 0x0101, genPush: 0x1001}},
	}
}

// tbTrieThreads are the operations raced with the prefix's reclaim: p's
// insert, which pushes k's cell down into a new inner node while the
// reclaim compacts the node above it (so the frozen word holds an inner
// node, and the compaction keeps a copy), and a reset of k, whose walk
// and unlink meet the compaction's frozen words and its replacement.
var tbTrieThreads = []string{"take.p", "reset.k"}

// tbTrieGenerated is the scenario of prefix p whose thread t does ops[t],
// each "OP" or "OP.KEY", at p's clock for the first thread and a
// millisecond later for the others.
func tbTrieGenerated(p tbTriePrefix, ops ...string) generated {
	var threads [][]model.TBInput[string]
	var race []string
	for t, op := range ops {
		name, key, _ := strings.Cut(op, ".")
		in := tbOp(name, key, p.now+int64(min(t, 1)))
		threads = append(threads, []model.TBInput[string]{in})
		race = append(race, fmt.Sprintf("T%d %s", t, in))
	}
	s := TokenBucketScenario("sys-tb-"+p.name+"-"+strings.Join(ops, "-"),
		"generated: "+p.state+"; "+strings.Join(race, ", "), nil, p.setup, threads...)
	return generated{Scenario: s.Hashes(p.hashes), prefix: p.name}
}

// sysTbTrie is the scenarios of these families: from every prefix, a
// reclaim at the prefix's clock raced by each of tbTrieThreads.
func sysTbTrie() []generated {
	var out []generated
	for _, p := range tbTriePrefixes() {
		for _, op := range tbTrieThreads {
			out = append(out, tbTrieGenerated(p, "reclaim", op))
		}
	}
	return out
}
