package auto

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/mutants/internal/generate"
)

// EquivalentFile is the committed list of surviving mutants, each with the
// reason it is equivalent: one mutant per line, its ID, " | ", and a
// sentence arguing that no behaviour can change. Lines starting with # are
// comments.
const EquivalentFile = "internal/mutants/auto/equivalent.txt"

// OpenFile lists the surviving mutants that are not equivalent but that no
// layer kills yet, each with what would kill it, in EquivalentFile's
// format. The campaign reports them as open and does not fail on them; it
// fails on a survivor that neither list names.
const OpenFile = "internal/mutants/auto/open.txt"

// ResultsFile holds the full campaign's figures.
const ResultsFile = "internal/mutants/auto/results.txt"

// ConcurrencyResultsFile holds the full concurrency campaign's figures
// (-concurrency).
const ConcurrencyResultsFile = "internal/mutants/auto/results-concurrency.txt"

// Equivalent maps a mutant ID to its reason.
type Equivalent map[string]string

// Of is the entries of the list whose mutants the operators of set make:
// one list holds both campaigns' survivors, and each campaign judges its
// own (an entry of the other's is neither stale nor a reason).
func (e Equivalent) Of(set OpSet) Equivalent {
	out := Equivalent{}
	for id, r := range e {
		if f := strings.Fields(id); len(f) >= 3 && set.Has(f[2]) {
			out[id] = r
		}
	}
	return out
}

// ReadEquivalent reads the list under root.
func ReadEquivalent(root string) (Equivalent, error) { return readList(root, EquivalentFile) }

// ReadOpen reads the list of open survivors under root.
func ReadOpen(root string) (Equivalent, error) { return readList(root, OpenFile) }

func readList(root, name string) (Equivalent, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	eq, err := ParseEquivalent(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), EquivalentFile+":"))
	}
	return eq, nil
}

// ParseEquivalent parses the list's text.
func ParseEquivalent(data []byte) (Equivalent, error) {
	eq := Equivalent{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, ok := strings.Cut(line, " | ")
		if !ok || strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("%s:%d: want `<mutant ID> | <why it is equivalent>`", EquivalentFile, n)
		}
		id = strings.TrimSpace(id)
		if _, dup := eq[id]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", EquivalentFile, n, id)
		}
		eq[id] = strings.TrimSpace(reason)
	}
	return eq, sc.Err()
}

// Verdict compares a campaign's survivors with the list: unlisted are
// survivors with no reason (the campaign fails), stale are listed mutants
// of the mutated files that the campaign killed or no longer generates.
func (r *Result) Verdict(eq Equivalent, files []string, lines map[string]map[int]bool) (unlisted []Outcome, stale []string) {
	return r.verdict(eq, nil, files, lines)
}

// VerdictOpen is Verdict with the open list too: a survivor on either list
// is not unlisted, and an entry of either that names a killed mutant is
// stale.
func (r *Result) VerdictOpen(eq, open Equivalent, files []string, lines map[string]map[int]bool) (unlisted []Outcome, stale []string) {
	return r.verdict(eq, open, files, lines)
}

func (r *Result) verdict(eq0, open Equivalent, files []string, lines map[string]map[int]bool) (unlisted []Outcome, stale []string) {
	eq := Equivalent{}
	for k, v := range eq0 {
		eq[k] = v
	}
	for k, v := range open {
		eq[k] = v
	}
	seen := map[string]bool{}
	for _, o := range r.Outcomes {
		id := o.Mutant.ID()
		seen[id] = true
		_, listed := eq[id]
		if o.Status != "killed" && !listed {
			unlisted = append(unlisted, o)
		}
		if o.Status == "killed" && listed {
			stale = append(stale, id+" (killed by "+o.Layer+")")
		}
	}
	if lines != nil || r.Sampled > 0 || r.Partial {
		return unlisted, stale // only some mutants of each file were judged
	}
	in := map[string]bool{}
	for _, f := range files {
		in[f] = true
	}
	for id := range eq {
		f, _, _ := strings.Cut(id, " ")
		if in[f] && !seen[id] {
			stale = append(stale, id+" (no longer generated)")
		}
	}
	sort.Strings(stale)
	return unlisted, stale
}

// Summary writes the campaign's figures: mutants per file, kills per
// layer, equivalent (listed), survivors, time.
func (r *Result) Summary(eq, open Equivalent) string {
	var b strings.Builder
	perLayer := map[string]int{}
	hangs := map[string]int{}
	killed, equiv, survived, notBuilt, opened := 0, 0, 0, 0, 0
	type fileCount struct{ gen, killed, equiv int }
	files := map[string]*fileCount{}
	var names []string
	for _, o := range r.Outcomes {
		fc := files[o.Mutant.File]
		if fc == nil {
			fc = &fileCount{}
			files[o.Mutant.File] = fc
			names = append(names, o.Mutant.File)
		}
		fc.gen++
		switch {
		case o.Status == "killed":
			killed++
			fc.killed++
			perLayer[o.Layer]++
			if o.Hang {
				hangs[o.Layer]++
			}
		case eq[o.Mutant.ID()] != "":
			equiv++
			fc.equiv++
		case open[o.Mutant.ID()] != "":
			opened++
		case o.Status == "not-built":
			notBuilt++
		default:
			survived++
		}
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "mutants generated: %d (%d more candidates did not compile and were dropped)\n", r.Generated, r.Dropped)
	if r.Sampled > 0 {
		fmt.Fprintf(&b, "(a sample: %d judged of %d)\n", r.Generated, r.Sampled)
	}
	fmt.Fprintf(&b, "killed: %d; equivalent (listed in %s): %d; open (live, listed in %s): %d; survived unlisted: %d; not built: %d\n", killed, EquivalentFile, equiv, OpenFile, opened, survived, notBuilt)
	if d := r.Generated - equiv; d > 0 {
		fmt.Fprintf(&b, "non-equivalent mutants killed: %d of %d (%.1f%%)\n", killed, d, 100*float64(killed)/float64(d))
	}
	fmt.Fprintf(&b, "time: %v (building the schema binaries %v)\n", r.Elapsed.Round(time.Second), r.Build.Round(time.Second))
	b.WriteString("\nkilled per layer, in the oracle's order (baseline time of the layer, no mutant active):\n")
	order := append([]string(nil), r.Order...)
	order = append(order, Arm64Layer)
	for _, l := range order {
		extra := ""
		if hangs[l] > 0 {
			extra = fmt.Sprintf(" (%d by a confirmed hang)", hangs[l])
		}
		base := ""
		if d, ok := r.Baseline[l]; ok {
			base = fmt.Sprintf(" [%v]", d.Round(10*time.Millisecond))
		}
		fmt.Fprintf(&b, "  %-16s %4d%s%s\n", l, perLayer[l], extra, base)
	}
	b.WriteString("\nper file (generated / killed / equivalent):\n")
	for _, n := range names {
		fc := files[n]
		fmt.Fprintf(&b, "  %-34s %4d %4d %4d\n", n, fc.gen, fc.killed, fc.equiv)
	}
	return b.String()
}

// Table writes one line per mutant: its fate, the layer and test that
// killed it, where, and its ID.
func (r *Result) Table() string {
	var b strings.Builder
	for _, o := range r.Outcomes {
		fmt.Fprintf(&b, "%-8s %-16s %-40s %s  %s\n", o.Status, orDash(o.Layer), orDash(trim(o.Test, 40)), o.Mutant.Where(), o.Mutant.ID())
	}
	return b.String()
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

// Root returns the module root: the nearest directory at or above the
// working directory that holds a go.mod.
func Root() (string, error) { return generate.Root() }
