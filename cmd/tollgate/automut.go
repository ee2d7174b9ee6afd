package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/mutants/auto"
)

// automutPackages are the packages the campaign mutates by default.
var automutPackages = []string{"impl/credits", "impl/tokenbucket", "model"}

// runAutomut is `tollgate mutants --auto`: the automatic mutation campaign
// (internal/mutants/auto).
func runAutomut(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutants --auto", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pkgs := fs.String("packages", strings.Join(automutPackages, ","), "comma-separated package directories to mutate (their non-test, non-generated files of the default build)")
	files := fs.String("files", "", "comma-separated files to mutate instead (slash paths from the module root)")
	changed := fs.Bool("changed", false, "mutate only the lines changed since -base (the CI mode)")
	base := fs.String("base", "", "with -changed: the commit to compare with (default: the merge base with origin/main when that differs from HEAD, else HEAD~1)")
	workers := fs.Int("workers", runtime.NumCPU(), "mutants judged at once")
	out := fs.String("out", "", "write the summary and the per-mutant table to this file (the full campaign writes "+auto.ResultsFile+")")
	list := fs.Bool("list", false, "print the mutants that would be judged, and exit")
	quiet := fs.Bool("q", false, "print no per-mutant progress")
	maxN := fs.Int("max", 0, "judge at most this many mutants, evenly spaced (0: all)")
	match := fs.String("match", "", "judge only the mutants whose ID matches this regular expression")
	idsFrom := fs.String("ids-from", "", "judge only the mutants whose IDs this file holds, one a line after its last two spaces (the unlisted survivors a campaign printed, or its -out table)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: tollgate mutants --auto [flags]\n\nGenerates mutants of impl/ and model/ (arithmetic, comparison boundary and")
		fmt.Fprintln(stderr, "negation, logical, increment/decrement, sign, statement removal, compare-and-swap")
		fmt.Fprintln(stderr, "as a store or a load then a store, a dropped conversion) and judges each by the")
		fmt.Fprintln(stderr, "whole suite's fast profile, cheapest layer first. Exits 1 if a mutant survives")
		fmt.Fprintln(stderr, "that "+auto.EquivalentFile+" does not list as equivalent.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tollgate mutants --auto: unexpected arguments %q\n", fs.Args())
		return 2
	}
	root, err := auto.Root()
	if err != nil {
		fmt.Fprintln(stderr, "tollgate mutants --auto:", err)
		return 2
	}
	var targets []string
	if *files != "" {
		targets = strings.Split(*files, ",")
	} else {
		for _, p := range strings.Split(*pkgs, ",") {
			fs, err := packageFiles(root, strings.Trim(p, "./"))
			if err != nil {
				fmt.Fprintln(stderr, "tollgate mutants --auto:", err)
				return 2
			}
			targets = append(targets, fs...)
		}
	}
	var lines map[string]map[int]bool
	if *changed {
		b, err := changedBase(root, *base)
		if err != nil {
			fmt.Fprintln(stderr, "tollgate mutants --auto -changed:", err)
			return 2
		}
		lines, err = changedLines(root, b, targets)
		if err != nil {
			fmt.Fprintln(stderr, "tollgate mutants --auto -changed:", err)
			return 2
		}
		targets = targets[:0:0]
		for f := range lines {
			targets = append(targets, f)
		}
		sort.Strings(targets)
		n := 0
		for _, l := range lines {
			n += len(l)
		}
		fmt.Fprintf(stdout, "changed since %s: %d lines in %d of the mutated files\n", b, n, len(targets))
		if len(targets) == 0 {
			fmt.Fprintln(stdout, "no mutated file changed: nothing to judge")
			return 0
		}
	}
	eq, err := auto.ReadEquivalent(root)
	if err != nil {
		fmt.Fprintln(stderr, "tollgate mutants --auto:", err)
		return 2
	}
	open, err := auto.ReadOpen(root)
	if err != nil {
		fmt.Fprintln(stderr, "tollgate mutants --auto:", err)
		return 2
	}
	if *list {
		n := 0
		for _, dir := range dirsOf(targets) {
			p, err := auto.LoadPackage(root, dir)
			if err != nil {
				fmt.Fprintln(stderr, "tollgate mutants --auto:", err)
				return 2
			}
			for _, f := range targets {
				if filepath.ToSlash(filepath.Dir(f)) != dir {
					continue
				}
				ms, _, err := p.Generate(f)
				if err != nil {
					fmt.Fprintln(stderr, "tollgate mutants --auto:", err)
					return 2
				}
				for _, m := range ms {
					if lines != nil && !lines[f][m.Line] {
						continue
					}
					n++
					fmt.Fprintf(stdout, "%s  %s\n", m.Where(), m.ID())
				}
			}
		}
		fmt.Fprintf(stdout, "%d mutants\n", n)
		return 0
	}
	var only func(auto.Mutant) bool
	if *match != "" || *idsFrom != "" {
		var re *regexp.Regexp
		if *match != "" {
			if re, err = regexp.Compile(*match); err != nil {
				fmt.Fprintln(stderr, "tollgate mutants --auto -match:", err)
				return 2
			}
		}
		var ids map[string]bool
		if *idsFrom != "" {
			data, err := os.ReadFile(*idsFrom)
			if err != nil {
				fmt.Fprintln(stderr, "tollgate mutants --auto -ids-from:", err)
				return 2
			}
			ids = map[string]bool{}
			for _, l := range strings.Split(string(data), "\n") {
				if i := strings.LastIndex(l, "  "); i >= 0 {
					ids[strings.TrimSpace(l[i+2:])] = true
				}
			}
		}
		only = func(m auto.Mutant) bool {
			return (re == nil || re.MatchString(m.ID())) && (ids == nil || ids[m.ID()])
		}
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) }
	if *quiet {
		logf = nil
	}
	res, err := auto.Campaign(auto.Config{Root: root, Files: targets, Workers: *workers, Log: logf, Lines: lines, Max: *maxN, Only: only})
	if err != nil {
		fmt.Fprintln(stderr, "tollgate mutants --auto:", err)
		return 1
	}
	summary := res.Summary(eq, open)
	unlisted, stale := res.VerdictOpen(eq, open, targets, lines)
	var report bytes.Buffer
	report.WriteString(summary)
	if len(unlisted) > 0 {
		fmt.Fprintf(&report, "\n%d surviving mutants are not listed as equivalent in %s (kill each with a test, or list it with the reason it cannot change behaviour, or in %s with what would kill it):\n", len(unlisted), auto.EquivalentFile, auto.OpenFile)
		for _, o := range unlisted {
			fmt.Fprintf(&report, "  %s  [%s]  %s\n", o.Mutant.Where(), o.Test, o.Mutant.ID())
		}
	}
	if len(stale) > 0 {
		fmt.Fprintf(&report, "\n%d entries of %s and %s are stale (remove them):\n", len(stale), auto.EquivalentFile, auto.OpenFile)
		for _, s := range stale {
			fmt.Fprintf(&report, "  %s\n", s)
		}
	}
	fmt.Fprint(stdout, "\n"+report.String())
	if *out != "" {
		data := report.String() + "\nevery mutant (status, layer, test, where, ID):\n" + res.Table()
		if err := os.WriteFile(*out, []byte(data), 0o644); err != nil {
			fmt.Fprintln(stderr, "tollgate mutants --auto:", err)
			return 1
		}
	}
	if len(unlisted) > 0 || len(stale) > 0 {
		return 1
	}
	fmt.Fprintln(stdout, "\nevery mutant was killed or is listed (equivalent, or open with what would kill it)")
	return 0
}

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
	p, err := auto.LoadPackage(root, dir)
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

// changedBase picks the commit to compare with. A clean clone of main (as
// CI has) holds origin/main at HEAD itself, so the merge base says
// nothing there; HEAD~1, the submission's last commit, is what it has.
func changedBase(root, base string) (string, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		b, err := cmd.Output()
		return strings.TrimSpace(string(b)), err
	}
	if base != "" {
		if _, err := git("rev-parse", "--verify", "--quiet", base+"^{commit}"); err != nil {
			return "", fmt.Errorf("-base %s is not a commit here", base)
		}
		return base, nil
	}
	head, err := git("rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("not a git checkout: %v", err)
	}
	if mb, err := git("merge-base", "HEAD", "origin/main"); err == nil && mb != "" && mb != head {
		return mb, nil
	}
	if p, err := git("rev-parse", "--verify", "--quiet", "HEAD~1^{commit}"); err == nil && p != "" {
		return p, nil
	}
	// A clone of one commit: everything is new.
	return "4b825dc642cb6eb9a060e54bf8d69288fbee4904", nil // the empty tree
}

// changedLines maps each target file changed since base (the work tree
// included) to the line numbers, in the current text, of its added or
// changed lines.
func changedLines(root, base string, targets []string) (map[string]map[int]bool, error) {
	args := append([]string{"diff", "-U0", "--no-color", base, "--"}, targets...)
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git diff %s: %v", base, err)
	}
	out := map[string]map[int]bool{}
	file := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "+++ "):
			file = strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
			if file == "/dev/null" {
				file = ""
			}
		case strings.HasPrefix(l, "@@ ") && file != "":
			// @@ -a,b +c,d @@
			f := strings.Fields(l)
			if len(f) < 3 {
				continue
			}
			start, count := f[2], "1"
			start = strings.TrimPrefix(start, "+")
			if s, c, ok := strings.Cut(start, ","); ok {
				start, count = s, c
			}
			s, err1 := strconv.Atoi(start)
			c, err2 := strconv.Atoi(count)
			if err1 != nil || err2 != nil {
				continue
			}
			for i := s; i < s+c; i++ {
				if out[file] == nil {
					out[file] = map[int]bool{}
				}
				out[file][i] = true
			}
		}
	}
	return out, sc.Err()
}
