// Package shard splits a run's work items into n deterministic, disjoint
// parts, so that n processes (CI jobs, machines) can share one run.
//
// A Shard is parsed from the "i/n" value of a -shard flag (1-based: "2/4"
// is the second of four). Whether an item belongs to a shard is a function
// of the item's name alone: Has hashes the name and keeps it in exactly one
// of the n shards. The union of shards 1/n … n/n is therefore the whole
// run and any two of them are disjoint, whatever the order in which the
// items are listed and whichever other items exist. The zero Shard, and
// "1/1", is the whole run.
//
// The package imports nothing of tollgate's, so every command may use it.
package shard

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// A Shard is the i-th of n parts of a run, 1 ≤ I ≤ N. The zero Shard is the
// whole run (as is I = N = 1).
type Shard struct {
	I, N int
}

// Parse parses a -shard flag's value "i/n" (decimal, 1 ≤ i ≤ n). The empty
// string is the whole run (the zero Shard). An error names the value and
// the rule it breaks, e.g. `-shard 0/3: i must be in 1..n`.
func Parse(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("-shard %s: want i/n, e.g. 2/4", s)
	}
	n, err := strconv.Atoi(ns)
	if err != nil || n < 1 {
		return Shard{}, fmt.Errorf("-shard %s: n must be an integer ≥ 1", s)
	}
	i, err := strconv.Atoi(is)
	if err != nil || i < 1 || i > n {
		return Shard{}, fmt.Errorf("-shard %s: i must be in 1..n", s)
	}
	return Shard{I: i, N: n}, nil
}

// Has reports whether the work item named name belongs to s. For a given
// n, exactly one of the shards 1/n … n/n has any name; the whole run has
// every name.
func (s Shard) Has(name string) bool {
	if s.N <= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()%uint64(s.N) == uint64(s.I-1)
}

// Whole reports whether s is the whole run (the zero Shard or 1/1).
func (s Shard) Whole() bool { return s.N <= 1 }

// String returns s as Parse reads it: "i/n", or "" for the zero Shard.
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return strconv.Itoa(s.I) + "/" + strconv.Itoa(s.N)
}
