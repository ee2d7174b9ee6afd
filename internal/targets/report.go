package targets

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// Markdown writes the runs as the results file: per target, a row per
// version and scenario with DFS's verdict (the fewest preemptions that
// reach a violation, and its schedule) and PCT's for seeds 1–5; then the
// teeth, each with the scenario that found it.
func Markdown(w io.Writer, runs []Run, command string) {
	fmt.Fprintf(w, "# The explorer on code nobody here wrote\n\n")
	fmt.Fprintf(w, "Written by `%s` (a campaign replaces the rows of the runs it makes again and keeps the others': each section names the commands that wrote it). Each target is built unchanged, rewritten through an overlay (explore/rewrite), and explored on the virtual clock: DFS over every schedule within the preemption bound (the first violation has the fewest; bound 2, or 1 where a section says so, and at most 100,000 runs over the bounds together, since each bound runs the schedules of the ones below it again: \"holds\" without \"exhaustive\" is a search cut there), then PCT with seeds 1–5 (2,000 schedules each, depth 3). The sequential bugs of these libraries (golang/go#56287, #52584, #71154; uber-go/ratelimit #119) are `tollgate limiters`' findings, not this table's: they need readings and limits no scenario here uses. Replay a schedule with `go test -run '^TestX$' -args -explore.replay=SCHEDULE` in the scenarios' module (`tollgate explore -targets NAME -keep` keeps it), or `tollgate explore -pkg DIR -run TestX -replay SCHEDULE`.\n\n", command)
	if strings.Contains(command, "-replays") {
		fmt.Fprintf(w, "Every violation's schedule below was replayed with `go test -run '^TestX$' -args -explore.replay=SCHEDULE` in its scenarios' module, and \"(replayed)\" marks those that failed again with the same kind of violation; one that did not says so in its cell. The last column is schedules per CPU-second of the test process (user and system time, porcupine's goroutines included), the figure that a loaded machine does not distort; \"not run\" rows name what the explorer would need to control.\n\n")
	}
	byTarget := map[string][]Run{}
	var order []string
	for _, r := range runs {
		if _, ok := byTarget[r.Target]; !ok {
			order = append(order, r.Target)
		}
		byTarget[r.Target] = append(byTarget[r.Target], r)
	}
	for _, name := range order {
		targetSection(w, name, byTarget[name])
	}
}

// targetSection writes one target's section: its table of versions and
// scenarios, then its teeth.
func targetSection(w io.Writer, name string, runs []Run) {
	t, _ := Lookup(name)
	fmt.Fprintf(w, "## %s\n\n", t.Title)
	if cmds := commands(runs); len(cmds) > 0 {
		fmt.Fprintf(w, "Written by `%s`.\n\n", strings.Join(cmds, "`, then `"))
	}
	bound := dfsBound(runs)
	fmt.Fprintf(w, "| version | scenario | DFS, bound %d | preemptions | schedule | PCT seeds 1–5 | schedules/s (DFS) | per CPU-s (DFS) |\n", bound)
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	var teeth []Run
	for _, r := range runs {
		if r.Tooth != "" {
			teeth = append(teeth, r)
			continue
		}
		if r.Err != "" {
			fmt.Fprintf(w, "| %s | — | **error**: %s | | | | | |\n", r.Version, oneLine(r.Err))
			continue
		}
		for _, s := range scenarios(r) {
			dfs, pct := split(r, s)
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Version, s, verdictCell(dfs, bound), preemptions(dfs),
				scheduleCell(dfs), pctCell(pct), rate(dfs), cpuRate(dfs))
		}
	}
	if len(teeth) > 0 {
		fmt.Fprintf(w, "\nTeeth (a hand-written concurrency bug in a copy of the target, testdata/%s/teeth; a scenario violated on the target itself is left out):\n\n", name)
		fmt.Fprintln(w, "| tooth | version | found by | strategy | preemptions | schedule |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|")
		base := violatedUnmutated(runs)
		for _, r := range teeth {
			toothRows(w, r, base[r.Version])
		}
	}
	fmt.Fprintln(w)
}

// violatedUnmutated is, per version, the scenarios violated on the
// unmutated target: they say nothing about a tooth.
func violatedUnmutated(runs []Run) map[string]map[string]bool {
	base := map[string]map[string]bool{}
	for _, r := range runs {
		if r.Tooth != "" {
			continue
		}
		base[r.Version] = map[string]bool{}
		for _, v := range r.Verdicts {
			if v.Verdict == "VIOLATED" {
				base[r.Version][v.Scenario] = true
			}
		}
	}
	return base
}

// toothRows writes a row for each scenario that found tooth run r (DFS's
// verdict, else the first PCT seed's that did), leaving out those violated
// on the unmutated version (base), or one row saying it was not found.
func toothRows(w io.Writer, r Run, base map[string]bool) {
	found := false
	for _, s := range scenarios(r) {
		if base[s] {
			continue
		}
		dfs, pct := split(r, s)
		v := dfs
		for i := range pct {
			if v == nil || v.Verdict != "VIOLATED" {
				v = &pct[i]
			}
		}
		if v == nil || v.Verdict != "VIOLATED" {
			continue
		}
		strategy := "dfs"
		if v.Strategy != "dfs" {
			strategy = fmt.Sprintf("%s, seed %d", v.Strategy, v.Seed)
			if dfs != nil {
				strategy += fmt.Sprintf(" (DFS within bound %d: not found)", dfs.Bound)
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s (%s) | %s | %d | %s |\n", r.Tooth, r.Version, v.Scenario, v.Kind, strategy, v.Preemptions, scheduleCell(v))
		found = true
	}
	if !found {
		why := "no scenario"
		if r.Err != "" {
			why = "error: " + oneLine(r.Err)
		}
		fmt.Fprintf(w, "| %s | %s | **not found** (%s) | | | |\n", r.Tooth, r.Version, why)
	}
}

// commands are the distinct commands that made runs, in order.
func commands(runs []Run) []string {
	var out []string
	for _, r := range runs {
		if r.Command != "" && !slices.Contains(out, r.Command) {
			out = append(out, r.Command)
		}
	}
	return out
}

// dfsBound is the bound most of runs' DFS verdicts ran at (2 when none
// says).
func dfsBound(runs []Run) int {
	count := map[int]int{}
	best := 2
	for _, r := range runs {
		for _, v := range r.Verdicts {
			if v.Strategy == "dfs" && v.Bound > 0 {
				count[v.Bound]++
				if count[v.Bound] > count[best] || count[v.Bound] == count[best] && v.Bound > best {
					best = v.Bound
				}
			}
		}
	}
	return best
}

func scenarios(r Run) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range r.Verdicts {
		if !seen[v.Scenario] {
			seen[v.Scenario] = true
			out = append(out, v.Scenario)
		}
	}
	sort.Strings(out)
	return out
}

func split(r Run, scenario string) (dfs *Verdict, pct []Verdict) {
	for i, v := range r.Verdicts {
		if v.Scenario != scenario {
			continue
		}
		if v.Strategy == "dfs" {
			dfs = &r.Verdicts[i]
		} else {
			pct = append(pct, v)
		}
	}
	return dfs, pct
}

// verdictCell is DFS's verdict, with its bound when it is not the
// table's.
func verdictCell(v *Verdict, bound int) string {
	at := ""
	if v != nil && v.Bound > 0 && v.Bound != bound {
		at = fmt.Sprintf(", bound %d", v.Bound)
	}
	switch {
	case v == nil:
		return "—"
	case v.Verdict == "VIOLATED":
		return fmt.Sprintf("**VIOLATED** (%s%s)", v.Kind, at)
	case v.Verdict == "holds" && v.Exhaustive:
		return fmt.Sprintf("holds, exhaustive (%d schedules%s)", v.Schedules, at)
	case v.Verdict == "holds" && v.Total > v.Schedules:
		// The budget caps the runs of every bound together.
		return fmt.Sprintf("holds (search cut after %d runs over bounds 0–%d: %d schedules at bound %d)", v.Total, v.Bound, v.Schedules, v.Bound)
	case v.Verdict == "holds":
		return fmt.Sprintf("holds (%d schedules%s)", v.Schedules, at)
	case v.Verdict == "not run":
		return "not run: " + oneLine(v.Detail)
	}
	return "no verdict: " + oneLine(v.Detail)
}

func preemptions(v *Verdict) string {
	if v == nil || v.Verdict != "VIOLATED" {
		return ""
	}
	return fmt.Sprint(v.Preemptions)
}

// scheduleCell is the schedule, and "replayed" when the campaign replayed
// it and it reproduced (what went wrong otherwise).
func scheduleCell(v *Verdict) string {
	if v == nil || v.Schedule == "" {
		return ""
	}
	s := "`" + v.Schedule + "`"
	switch v.Replayed {
	case "":
	case "reproduced":
		s += " (replayed)"
	default:
		s += " **replay: " + oneLine(v.Replayed) + "**"
	}
	return s
}

// pctCell says whether the seeds agree: "VIOLATED ×5", "holds ×5", or
// each seed's verdict.
func pctCell(vs []Verdict) string {
	if len(vs) == 0 {
		return "—"
	}
	same := true
	for _, v := range vs[1:] {
		same = same && v.Verdict == vs[0].Verdict
	}
	if same {
		return fmt.Sprintf("%s ×%d", vs[0].Verdict, len(vs))
	}
	var parts []string
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("%d: %s", v.Seed, v.Verdict))
	}
	return strings.Join(parts, ", ")
}

func rate(v *Verdict) string {
	if v == nil || v.Seconds <= 0 || v.Schedules < 100 {
		return ""
	}
	return fmt.Sprintf("%.0f", float64(v.Schedules)/v.Seconds)
}

// cpuRate is schedules per CPU-second (every goroutine of the process,
// porcupine's included).
func cpuRate(v *Verdict) string {
	if v == nil || v.CPU <= 0 || v.Schedules < 100 {
		return ""
	}
	return fmt.Sprintf("%.0f", float64(v.Schedules)/v.CPU)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
