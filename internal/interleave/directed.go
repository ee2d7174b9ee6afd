package interleave

import "github.com/tollgate/tollgate/model"

// A DirectedRun is one schedule of one scenario, kept because it reaches an
// interleaving deeper than the catalogue's preemption bound: a bug there
// needs more preemptions than an exhaustive search can afford on every
// run, yet one schedule of it replays in milliseconds. Each was written by
// hand from a trace, or found once by a deeper search of a mutant (the
// command in Found), and the real code must pass it; the mutant it was made
// for (Kills) fails it. TestDirectedRealCode replays them all, and the
// mutation layer runs that test beside the catalogue.
type DirectedRun struct {
	Scenario Scenario
	// Schedule is the run, as a failure prints it: thread×steps, ... .
	// The real code follows it up to its last segment (TestDirectedFits);
	// the last runs the first thread to the end.
	Schedule string
	// Kills names the mutant the schedule was made for and what it does
	// there; Found says how the schedule was made.
	Kills, Found string
}

// DirectedScenarios is the directed runs as scenarios that Explore replays
// on their one schedule (Scenario.Fixed) instead of searching: the default
// run (Select's "all") and the mutation layer's Hunt run them after the
// searched scenarios, a few milliseconds each.
func DirectedScenarios() []Scenario {
	var out []Scenario
	for _, d := range Directed() {
		s := d.Scenario
		s.fixed = d.Schedule
		out = append(out, s)
	}
	return out
}

// Directed is the directed runs. The scenarios not in the catalogue are
// found by Lookup too, so `tollgate explore -scenario NAME -replay
// SCHEDULE` replays each.
func Directed() []DirectedRun {
	const (
		h1, h2, h3, h4, h9 model.HolderID = 1, 2, 3, 4, 9
		inl                               = model.Internal
	)
	compact, _ := catalogued("tb-compact-vs-append")
	// fold's two reclaims against p's take (generate_tb_trie.go), searched
	// there within one preemption.
	frozenInner := tbTrieGenerated(tbTriePrefixes()[0], "reclaim", "reclaim", "take.p").Scenario
	frozenInner.Name = "tb-sweep-through-frozen-inner"
	frozenInner.Race = "T12, T11: a reclaim at 2 ms forgets j, compacts the node where k and j differ to k's cell and then the node above, which holds only that cell; a second reclaim, at 3 ms, reads that node and stops; p's take pushes k's cell down between the first reclaim's read of the node's word and its freeze, so the freeze wraps the new inner node and the node is replaced by a copy; the second reclaim then sweeps the old node and must walk through the frozen word into the inner node to judge k, full at 3 ms, and forget it"
	frozenInner.most = 0
	return []DirectedRun{{
		Scenario: CreditsScenario("cr-exhausted-twice-behind",
			"C2: a reserver's claiming pass and its first scan each see every internal slot in use, though one was free at every instant: each time the free slot moves from ahead of the scans to behind them, as a release frees a slot the scans have passed and a reserve that read it before claims the one ahead. Only the second scan, comparing each row with the first's, can tell",
			// Slots 27–30 are h9's and 31 is h2's; 32 is free.
			[]CrStep{Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h2, inl)},
			[]CrStep{Reserve(h1, inl)},          // T0: the reserver the scans are of
			[]CrStep{Reserve(h3, inl)},          // T1: reads 27–31 in use, then claims 32
			[]CrStep{Release(h2, SetupTok(4))},  // T2: frees 31 behind T0's claiming pass
			[]CrStep{Reserve(h4, inl)},          // T3: reads 27–30 in use, then claims 31
			[]CrStep{Release(h9, SetupTok(0))}), // T4: frees 27 behind T0's first scan
		// T1 and T3 read the slots below the free one; T0's claiming pass
		// reads 27–31; T2 frees 31 and T1 claims 32; T0 reads 32 and 27,
		// its first scan; T3 reads 31 free, T4 frees 27, T3 claims 31; T0
		// scans on: every row it reads is in use, but 27 is not the row the
		// first scan saw, and T0 reserves it.
		Schedule: "1x7.3x6.0x7.2x5.1x5.0x2.3x2.4x5.3x3.0x40",
		Kills:    "impl/credits/credits.go Table.exhausted negate `<=` → `>` #1 (the second scan never runs): T0 answers exhausted while slot 27 is free, which the table's snapshots refute (C2)",
		Found:    "by hand, from the trace of `tollgate explore -scenario cr-exhausted-twice-behind -replay 1x200` (5 preemptions)",
	}, {
		Scenario: CreditsScenario("cr-exhausted-aba-behind",
			"C2: as cr-exhausted-twice-behind, and slot 27 is recycled between the two scans: freed and reserved again before the second scan reads it, so it reads in use both times under another generation, while the free slot moves behind the second scan too. Only a comparison of the whole row word (state and generation) tells the scans apart",
			// Slots 27–30 are h9's and 31 is h2's; 32 is free.
			[]CrStep{Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h2, inl)},
			[]CrStep{Reserve(h1, inl)},                                                 // T0: the reserver the scans are of
			[]CrStep{Reserve(h3, inl), Reserve(h3, inl)},                               // T1: claims 32, later 28
			[]CrStep{Release(h2, SetupTok(4)), Reserve(h2, inl), Release(h2, Mine(1))}, // T2: frees 31; re-reserves 27, frees it
			[]CrStep{Reserve(h4, inl)},                                                 // T3: claims 31
			[]CrStep{Release(h9, SetupTok(0)), Release(h9, SetupTok(1))}),              // T4: frees 27, then 28
		// As cr-exhausted-twice-behind up to T0's second scan; then T4 frees
		// 28, T2 reserves 27 (generation 2), T0's second scan reads 27 in use
		// and goes on, T2 frees 27 again while T1, which read 27 in use,
		// claims 28: at every instant one internal slot was free, and the
		// second scan saw 27 reserved under a generation the first did not.
		Schedule: "1x7.3x6.0x7.2x5.1x5.0x2.3x2.4x5.3x3.0x5.4x5.2x7.0x1.1x3.2x5.1x5.0x40",
		Kills:    "cr-exhausted-state-only: the second scan compares row states, not row words; 27 reads reserved in both scans, T0 answers exhausted while a slot was free at every instant (C2)",
		Found:    "by hand, extending cr-exhausted-twice-behind's schedule (8 preemptions; bound 3 and PCT at 200,000 runs per depth do not reach it)",
	}, {
		Scenario: compact,
		Schedule: "2x15.0x80.1x15.0x2.2x5.0x108",
		Kills:    "impl/tokenbucket/trie.go trie.compact cas-loadstore `x.next.CompareAndSwap(nil, t.sealed)` #0: the compaction loads the dead cell's next as nil, the take's append lands, and the compaction's store of the seal overwrites it; the empty key's take is lost (T11)",
		Found:    "by `tollgate explore -bound 3 -scenario tb-compact-vs-append` on that mutant (298,078 schedules, 10 min 35 s on 2 shared cores; 3 preemptions), again when cells gained their first word (the schedule before, 2x9.0x66.1x10.0x2.2x5.0x82, was found in 88,713 schedules)",
	}, {
		// T0 compacts the level-2 node to k's cell and reads the level-1
		// node's word (k's cell) to freeze it; T1's reclaim reads the
		// level-1 node and stops; T2's take pushes k's cell down; T0's
		// freeze fails, wraps the new inner node, and T0 replaces the node
		// by a copy; T1 sweeps the old node through its frozen words.
		Scenario: frozenInner,
		Schedule: "0x212.1x7.2x26.0x147.1x162",
		Kills:    "tb-sweep-wrapped-inner: the second reclaim skips the inner node behind the frozen word, keeps k's full bucket and answers a count that no order of the steps explains (T11, T12)",
		Found:    "by `tollgate explore -bound 2 -scenario sys-tb-fold-reclaim-reclaim-take.p` on that mutant with the scenario's cap of one preemption lifted (8,478 schedules, 11 s; 2 preemptions; the whole search at bound 2 takes over 100,000)",
	}}
}
