package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tollgate/tollgate/internal/targets"
)

// targetsConfig is explore -targets: the campaign over code nobody here
// wrote (internal/targets).
type targetsConfig struct {
	names    []string
	versions string // all, latest, or a comma-separated list
	teeth    bool
	run      string
	out      string
	keep     bool
	bound    int
	replays  bool
	// checkReplays: explore nothing, replay what -out's table shows.
	checkReplays bool
}

func parseTargets(list, versions string, teeth bool, run, out string, keep bool, bound int) (*targetsConfig, error) {
	c := &targetsConfig{versions: versions, teeth: teeth, run: run, out: out, keep: keep, bound: bound}
	if list == "all" {
		for _, t := range targets.All {
			c.names = append(c.names, t.Name)
		}
	} else {
		for _, n := range strings.Split(list, ",") {
			if _, err := targets.Lookup(n); err != nil {
				return nil, fmt.Errorf("explore: -targets: %w", err)
			}
			c.names = append(c.names, n)
		}
	}
	switch versions {
	case "all", "latest":
	default:
		if len(c.names) != 1 {
			return nil, fmt.Errorf("explore: -versions %s: a list of versions needs exactly one target", versions)
		}
	}
	return c, nil
}

// runTargets runs the campaign and writes targets.md and targets.json to
// -out when it is set.
func runTargets(c *targetsConfig, stdout, stderr io.Writer) int {
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exploreUsage
	}
	if c.checkReplays {
		return checkReplays(c, root, stdout, stderr)
	}
	var runs []targets.Run
	failed := false
	for _, name := range c.names {
		t, _ := targets.Lookup(name)
		versions := t.Versions
		switch c.versions {
		case "all":
		case "latest":
			versions = versions[len(versions)-1:]
		default:
			versions = strings.Split(c.versions, ",")
		}
		violated := map[string]map[string]bool{} // version → scenarios violated
		for _, v := range versions {
			r := oneTarget(t, v, "", nil, c, root, stdout, &failed)
			violated[v] = r.Violated()
			runs = append(runs, r)
		}
		if c.teeth {
			// A tooth is found by a scenario that holds on the target
			// itself: the base run of the teeth's version says which.
			v := t.Versions[len(t.Versions)-1]
			if violated[v] == nil {
				r := oneTarget(t, v, "", nil, c, root, stdout, &failed)
				violated[v] = r.Violated()
				runs = append(runs, r)
			}
			for _, tooth := range t.Teeth() {
				runs = append(runs, oneTarget(t, v, tooth, violated[v], c, root, stdout, &failed))
			}
		}
	}
	if c.out != "" {
		// The targets not run keep their rows: the file's command is the
		// one that would write them all.
		runs = targets.Merge(readTargets(c.out), runs)
		all := *c
		all.names = targets.Names(runs)
		if err := writeTargets(c.out, runs, all.command()); err != nil {
			fmt.Fprintln(stderr, err)
			return exploreUsage
		}
		fmt.Fprintf(stdout, "wrote %s and %s\n", filepath.Join(c.out, "targets.md"), filepath.Join(c.out, "targets.json"))
	} else {
		targets.Markdown(stdout, runs, c.command())
	}
	if failed {
		return exploreViolation
	}
	return explorePass
}

// oneTarget runs one target at one version, prints a line per verdict,
// and marks failed when the run could not give verdicts or a tooth went
// unfound.
// A tooth counts as found only by a scenario not in base (those violated
// on the target itself).
func oneTarget(t targets.Target, version, tooth string, base map[string]bool, c *targetsConfig, root string, stdout io.Writer, failed *bool) targets.Run {
	label := t.Name + "@" + version
	if tooth != "" {
		label += " tooth " + tooth
	}
	r := targets.RunOne(t, version, tooth, targets.Options{Root: root, Run: c.run, Keep: c.keep, Bound: c.bound, Replays: c.replays})
	r.Command = c.command()
	if r.Dir != "" {
		fmt.Fprintf(stdout, "%s: the scenarios' module is kept in %s\n", label, r.Dir)
	}
	if r.Err != "" {
		*failed = true
		fmt.Fprintf(stdout, "%s: error: %s\n%s\n", label, r.Err, r.Log)
		return r
	}
	found := false
	for _, v := range r.Verdicts {
		seed := ""
		if v.Strategy != "dfs" {
			seed = fmt.Sprintf(" seed %d", v.Seed)
		}
		line := fmt.Sprintf("%s: %s %s%s: %s", label, v.Scenario, v.Strategy, seed, v.Verdict)
		if v.Verdict == "VIOLATED" {
			found = found || !base[v.Scenario]
			line += fmt.Sprintf(" (%s, %d preemptions, schedule %s)", v.Kind, v.Preemptions, v.Schedule)
			if v.Replayed != "" {
				line += "; replay: " + v.Replayed
				if v.Replayed != "reproduced" {
					*failed = true
				}
			}
		}
		if v.Verdict == "no verdict" {
			*failed = true
		}
		if v.Verdict == "no verdict" || v.Verdict == "not run" {
			line += ": " + v.Detail
		}
		fmt.Fprintf(stdout, "%s  [%d schedules, %.2fs]\n", line, v.Schedules, v.Seconds)
	}
	fmt.Fprintf(stdout, "%s: rewrite %.2fs, build and run %.2fs\n", label, r.Rewrite, r.Test)
	if tooth != "" && !found {
		*failed = true
		fmt.Fprintf(stdout, "%s: NOT FOUND by any scenario\n", label)
	}
	return r
}

// command is the command line that runs c.
func (c *targetsConfig) command() string {
	s := "tollgate explore -targets " + strings.Join(c.names, ",")
	if c.versions != "all" {
		s += " -versions " + c.versions
	}
	if c.teeth {
		s += " -teeth"
	}
	if c.replays {
		s += " -replays"
	}
	if c.run != "" {
		s += " -run " + c.run
	}
	if c.bound > 0 {
		s += fmt.Sprintf(" -bound %d", c.bound)
	}
	if c.out != "" {
		s += " -out " + c.out
	}
	return s
}

// checkReplays replays the schedules that -out's table shows for c's
// targets (those not replayed yet), each in a scenarios' module built as
// the campaign builds it, and writes the table again with what each
// replay gave. It explores nothing.
func checkReplays(c *targetsConfig, root string, stdout, stderr io.Writer) int {
	if c.out == "" {
		fmt.Fprintln(stderr, "explore: -check-replays needs -out, the directory of the table whose schedules it replays")
		return exploreUsage
	}
	old := readTargets(c.out)
	if old == nil {
		fmt.Fprintf(stderr, "explore: -check-replays: no readable %s\n", filepath.Join(c.out, "targets.json"))
		return exploreUsage
	}
	failed := false
	for i, r := range old {
		if !slices.Contains(c.names, r.Target) || len(targets.Shown(r)) == 0 || replayed(r) {
			continue
		}
		t, _ := targets.Lookup(r.Target)
		label := t.Name + "@" + r.Version
		if r.Tooth != "" {
			label += " tooth " + r.Tooth
		}
		again := targets.RunOne(t, r.Version, r.Tooth, targets.Options{Root: root, Only: r.Verdicts, Keep: c.keep})
		if again.Err != "" {
			failed = true
			fmt.Fprintf(stdout, "%s: error: %s\n%s\n", label, again.Err, again.Log)
			continue
		}
		old[i].Verdicts = again.Verdicts
		for _, j := range targets.Shown(again) {
			v := again.Verdicts[j]
			fmt.Fprintf(stdout, "%s: %s %s seed %d schedule %s: %s\n", label, v.Scenario, v.Strategy, v.Seed, v.Schedule, v.Replayed)
			failed = failed || v.Replayed != "reproduced"
		}
	}
	// The file is read again: a campaign over other targets may have
	// written it meanwhile.
	var checked []targets.Run
	for _, r := range old {
		if slices.Contains(c.names, r.Target) {
			checked = append(checked, r)
		}
	}
	runs := targets.Merge(readTargets(c.out), checked)
	all := *c
	all.names = targets.Names(runs)
	all.checkReplays = false
	all.replays = true
	if err := writeTargets(c.out, runs, all.command()); err != nil {
		fmt.Fprintln(stderr, err)
		return exploreUsage
	}
	if failed {
		return exploreViolation
	}
	return explorePass
}

// replayed: every schedule r's table shows was replayed, and reproduced.
func replayed(r targets.Run) bool {
	for _, i := range targets.Shown(r) {
		if r.Verdicts[i].Replayed != "reproduced" {
			return false
		}
	}
	return true
}

// readTargets reads dir's targets.json, if any (nil when there is none or
// it does not parse: the campaign then writes its own runs only).
func readTargets(dir string) []targets.Run {
	b, err := os.ReadFile(filepath.Join(dir, "targets.json"))
	if err != nil {
		return nil
	}
	var runs []targets.Run
	if json.Unmarshal(b, &runs) != nil {
		return nil
	}
	return runs
}

func writeTargets(dir string, runs []targets.Run, command string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "targets.md"))
	if err != nil {
		return err
	}
	targets.Markdown(f, runs, command)
	if err := f.Close(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(runs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "targets.json"), append(b, '\n'), 0o644)
}

// moduleRoot is tollgate's checkout, which the scenarios' modules require.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/tollgate/tollgate").Output()
	if err != nil {
		return "", fmt.Errorf("explore -targets runs in tollgate's checkout (go list -m github.com/tollgate/tollgate: %v)", err)
	}
	return strings.TrimSpace(string(out)), nil
}
