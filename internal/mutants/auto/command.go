package auto

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/tollgate/tollgate/internal/shard"
)

// DefaultPackages are the packages a campaign mutates when Options names
// none.
var DefaultPackages = []string{"impl/credits", "impl/tokenbucket", "model"}

// ConcurrencyPackages are the packages the concurrency campaign mutates
// when Options names none: the two tables, every atomic site of theirs.
var ConcurrencyPackages = []string{"impl/credits", "impl/tokenbucket"}

// Options is the whole input of `tollgate mutants --auto`, one field a
// flag. Its zero value is not valid: Workers must be set.
type Options struct {
	// Packages are the package directories mutated (their non-test files
	// of the default build that are not generated), unless Files is set.
	Packages []string
	// Files, when set, are the files mutated, slash paths from the root.
	Files []string
	// Changed keeps only the lines changed since Base (ChangedBase picks
	// it when Base is empty).
	Changed bool
	Base    string
	Workers int
	// Out, when set, is where the summary and the per-mutant table are
	// written (the full campaign writes ResultsFile).
	Out string
	// List prints the mutants that would be judged and judges none.
	List bool
	// Quiet prints no per-mutant progress.
	Quiet bool
	// Max judges at most that many mutants, evenly spaced (0: all).
	Max int
	// Match keeps the mutants whose ID it matches; IDsFrom those whose ID
	// a file holds, one a line after its last two spaces.
	Match, IDsFrom string
	// Set is the operators (Classic when empty). The concurrency set is
	// judged by the default explore run alone (ConcurrencyLayers) and
	// mutates ConcurrencyPackages by default; its full campaign writes
	// ConcurrencyResultsFile.
	Set OpSet
	// Shard keeps the mutants whose ID falls in it (internal/shard): the
	// shards 1/n … n/n of one campaign judge each of its mutants once.
	// With Max, each shard takes its own evenly spaced sample.
	Shard shard.Shard
}

// ErrUsage is wrapped by Run's errors that are the options' fault or the
// checkout's (a bad flag, a file that cannot be read), as against a
// campaign that failed to run.
var ErrUsage = errors.New("usage")

// Run runs the campaign o describes in the module at root, writing its
// progress and report to w. pass is false when a mutant survived that
// neither EquivalentFile nor OpenFile lists, or an entry of those is
// stale. An error is a campaign that could not run; it wraps ErrUsage
// when the options or the checkout are at fault.
func Run(root string, o Options, w io.Writer) (pass bool, err error) {
	usage := func(err error) error { return fmt.Errorf("%w: %w", ErrUsage, err) }
	if o.Workers < 1 {
		return false, usage(fmt.Errorf("-workers %d must be at least 1", o.Workers))
	}
	only, err := o.filter()
	if err != nil {
		return false, usage(err)
	}
	targets, err := o.targets(root)
	if err != nil {
		return false, usage(err)
	}
	var lines map[string]map[int]bool
	if o.Changed {
		if targets, lines, err = changedTargets(root, o.Base, targets, w); err != nil {
			return false, usage(err)
		}
		if len(targets) == 0 {
			fmt.Fprintln(w, "no mutated file changed: nothing to judge")
			return true, nil
		}
	}
	eq, err := ReadEquivalent(root)
	if err != nil {
		return false, usage(err)
	}
	open, err := ReadOpen(root)
	if err != nil {
		return false, usage(err)
	}
	if o.List {
		return true, list(root, targets, lines, only, o.Set, w)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	if o.Quiet {
		logf = nil
	}
	cfg := Config{Root: root, Files: targets, Workers: o.Workers, Log: logf, Lines: lines, Max: o.Max, Only: only, Set: o.Set}
	if o.Set == Concurrency {
		cfg.Layers = ConcurrencyLayers
	}
	res, err := Campaign(cfg)
	if err != nil {
		return false, err
	}
	report, pass := res.report(eq.Of(o.Set), open.Of(o.Set), targets, lines)
	fmt.Fprint(w, "\n"+report)
	if o.Out != "" {
		data := report + "\nevery mutant (status, layer, test, where, ID):\n" + res.Table()
		if err := os.WriteFile(o.Out, []byte(data), 0o644); err != nil {
			return false, err
		}
	}
	if pass {
		fmt.Fprintln(w, "\nevery mutant was killed or is listed (equivalent, or open with what would kill it)")
	}
	return pass, nil
}

// report is the campaign's summary with its unlisted survivors and stale
// list entries, and whether there are none.
func (r *Result) report(eq, open Equivalent, targets []string, lines map[string]map[int]bool) (string, bool) {
	unlisted, stale := r.VerdictOpen(eq, open, targets, lines)
	var b bytes.Buffer
	b.WriteString(r.Summary(eq, open))
	if len(unlisted) > 0 {
		fmt.Fprintf(&b, "\n%d surviving mutants are not listed as equivalent in %s (kill each with a test, or list it with the reason it cannot change behaviour, or in %s with what would kill it):\n", len(unlisted), EquivalentFile, OpenFile)
		for _, o := range unlisted {
			fmt.Fprintf(&b, "  %s  [%s]  %s\n", o.Mutant.Where(), o.Test, o.Mutant.ID())
		}
	}
	if len(stale) > 0 {
		fmt.Fprintf(&b, "\n%d entries of %s and %s are stale (remove them):\n", len(stale), EquivalentFile, OpenFile)
		for _, s := range stale {
			fmt.Fprintf(&b, "  %s\n", s)
		}
	}
	return b.String(), len(unlisted) == 0 && len(stale) == 0
}

// filter is the mutants Match, IDsFrom and Shard keep (nil: all).
func (o Options) filter() (func(Mutant) bool, error) {
	if o.Match == "" && o.IDsFrom == "" && o.Shard.Whole() {
		return nil, nil
	}
	var re *regexp.Regexp
	if o.Match != "" {
		var err error
		if re, err = regexp.Compile(o.Match); err != nil {
			return nil, fmt.Errorf("-match: %w", err)
		}
	}
	var ids map[string]bool
	if o.IDsFrom != "" {
		data, err := os.ReadFile(o.IDsFrom)
		if err != nil {
			return nil, fmt.Errorf("-ids-from: %w", err)
		}
		ids = idsOf(data)
	}
	sh := o.Shard
	return func(m Mutant) bool {
		id := m.ID()
		return (re == nil || re.MatchString(id)) && (ids == nil || ids[id]) && sh.Has(id)
	}, nil
}

// idsOf reads mutant IDs, one a line after its last two spaces (the
// unlisted survivors a campaign printed, or its -out table).
func idsOf(data []byte) map[string]bool {
	ids := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if i := strings.LastIndex(l, "  "); i >= 0 {
			ids[strings.TrimSpace(l[i+2:])] = true
		}
	}
	return ids
}

// targets are the files o mutates.
func (o Options) targets(root string) ([]string, error) {
	if len(o.Files) > 0 {
		return o.Files, nil
	}
	pkgs := o.Packages
	if len(pkgs) == 0 {
		pkgs = DefaultPackages
		if o.Set == Concurrency {
			pkgs = ConcurrencyPackages
		}
	}
	var out []string
	for _, p := range pkgs {
		fs, err := packageFiles(root, strings.Trim(p, "./"))
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
}

// changedTargets keeps the targets changed since base and their changed
// lines, and says how many.
func changedTargets(root, base string, targets []string, w io.Writer) ([]string, map[string]map[int]bool, error) {
	b, err := ChangedBase(root, base)
	if err != nil {
		return nil, nil, fmt.Errorf("-changed: %w", err)
	}
	lines, err := ChangedLines(root, b, targets)
	if err != nil {
		return nil, nil, fmt.Errorf("-changed: %w", err)
	}
	var changed []string
	n := 0
	for f, l := range lines {
		changed = append(changed, f)
		n += len(l)
	}
	sort.Strings(changed)
	fmt.Fprintf(w, "changed since %s: %d lines in %d of the mutated files\n", b, n, len(changed))
	return changed, lines, nil
}

// list prints the mutants a campaign over targets would judge.
func list(root string, targets []string, lines map[string]map[int]bool, only func(Mutant) bool, set OpSet, w io.Writer) error {
	n := 0
	for _, dir := range dirsOf(targets) {
		p, err := LoadPackage(root, dir)
		if err != nil {
			return err
		}
		for _, f := range targets {
			if filepath.ToSlash(filepath.Dir(f)) != dir {
				continue
			}
			ms, _, err := p.GenerateSet(f, set)
			if err != nil {
				return err
			}
			for _, m := range ms {
				if (lines != nil && !lines[f][m.Line]) || (only != nil && !only(m)) {
					continue
				}
				n++
				fmt.Fprintf(w, "%s  %s\n", m.Where(), m.ID())
			}
		}
	}
	fmt.Fprintf(w, "%d mutants\n", n)
	return nil
}

// dirsOf is the sorted directories of files.
func dirsOf(files []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		d := filepath.ToSlash(filepath.Dir(f))
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// packageFiles lists a package's mutated files: the non-test Go files of
// the default build that are not generated.
func packageFiles(root, dir string) ([]string, error) {
	p, err := LoadPackage(root, dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range p.Files {
		if bytes.Contains(p.Source(f), []byte("// Code generated ")) {
			continue
		}
		out = append(out, f)
	}
	return out, nil
}
