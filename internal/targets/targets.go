// Package targets is the explorer's campaign over code nobody here wrote:
// golang.org/x/time/rate, go.uber.org/ratelimit, Go's own HashTrieMap,
// github.com/puzpuzpuz/xsync/v4, golang.org/x/sync's semaphore, errgroup
// and singleflight, jackc/puddle, sourcegraph/conc and golang-lru's
// expirable LRU, each at every version chosen, each with
// its scenarios (testdata/<target>/*_test.go, through the verdict helper
// in testdata/common).
//
// A run builds a module of its own in a temporary directory: the
// scenarios, a go.mod that requires the target at the version and
// tollgate at this checkout, and then rewrites and tests it as tollgate
// explore -pkg does (explore/rewrite), with no change to the target's
// source. A tooth is a hand-written concurrency bug (testdata/<target>/
// teeth/*.patch) applied to a copy of the target: the same scenarios must
// find it.
package targets

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate/tollgate/explore/rewrite"
)

//go:embed testdata
var files embed.FS

// Target is one library under exploration.
type Target struct {
	// Name is how the campaign names it: xtime, uber, hashtriemap, xsync,
	// semaphore, ….
	Name string
	// Title names it in results.
	Title string
	// Module is the module required at each version ("" when the source
	// is copied into the scenarios' directory, as HashTrieMap's is).
	Module string
	// Package is the import path of the package the scenarios explore.
	Package string
	// Versions are the versions explored, oldest first.
	Versions []string
}

// All are the targets, in the order the campaign runs them.
var All = []Target{
	{Name: "xtime", Title: "golang.org/x/time/rate", Module: "golang.org/x/time", Package: "golang.org/x/time/rate",
		Versions: []string{"v0.1.0", "v0.2.0", "v0.3.0", "v0.4.0", "v0.5.0", "v0.6.0", "v0.7.0", "v0.8.0",
			"v0.9.0", "v0.10.0", "v0.11.0", "v0.12.0", "v0.13.0", "v0.14.0", "v0.15.0", "v0.16.0"}},
	{Name: "uber", Title: "go.uber.org/ratelimit", Module: "go.uber.org/ratelimit", Package: "go.uber.org/ratelimit",
		Versions: []string{"v0.2.0", "v0.3.0", "v0.3.1"}},
	{Name: "hashtriemap", Title: "Go's internal/sync.HashTrieMap (a copy)", Package: "example.com/target",
		Versions: []string{"go1.26"}},
	{Name: "xsync", Title: "github.com/puzpuzpuz/xsync/v4", Module: "github.com/puzpuzpuz/xsync/v4",
		Package: "github.com/puzpuzpuz/xsync/v4", Versions: []string{"v4.5.0"}},
	{Name: "semaphore", Title: "golang.org/x/sync/semaphore", Module: "golang.org/x/sync", Package: "golang.org/x/sync/semaphore",
		Versions: xsyncVersions},
	// errgroup and singleflight at the oldest and newest of those
	// versions: in between their code changed in comments, interface{}
	// to any, and a panic's message only.
	{Name: "errgroup", Title: "golang.org/x/sync/errgroup", Module: "golang.org/x/sync", Package: "golang.org/x/sync/errgroup",
		Versions: []string{"v0.18.0", "v0.25.0"}},
	{Name: "singleflight", Title: "golang.org/x/sync/singleflight", Module: "golang.org/x/sync", Package: "golang.org/x/sync/singleflight",
		Versions: []string{"v0.18.0", "v0.25.0"}},
	{Name: "puddle", Title: "github.com/jackc/puddle/v2", Module: "github.com/jackc/puddle/v2", Package: "github.com/jackc/puddle/v2",
		Versions: []string{"v2.2.4"}},
	{Name: "conc", Title: "github.com/sourcegraph/conc (pool, WaitGroup)", Module: "github.com/sourcegraph/conc", Package: "github.com/sourcegraph/conc/pool",
		Versions: []string{"v0.3.0"}},
	{Name: "expirable", Title: "github.com/hashicorp/golang-lru/v2/expirable", Module: "github.com/hashicorp/golang-lru/v2", Package: "github.com/hashicorp/golang-lru/v2/expirable",
		Versions: []string{"v2.0.7"}},
}

// xsyncVersions are golang.org/x/sync's tagged versions the module proxy
// serves here.
var xsyncVersions = []string{"v0.18.0", "v0.19.0", "v0.20.0", "v0.21.0", "v0.22.0", "v0.23.0", "v0.24.0", "v0.25.0"}

// Lookup returns the target named name.
func Lookup(name string) (Target, error) {
	var names []string
	for _, t := range All {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return Target{}, fmt.Errorf("targets: unknown target %q (known: %s)", name, strings.Join(names, ", "))
}

// Teeth lists the target's teeth: the names of its patches.
func (t Target) Teeth() []string {
	entries, _ := fs.ReadDir(files, "testdata/"+t.Name+"/teeth")
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".patch"); ok {
			out = append(out, name)
		}
	}
	return out
}

// Verdict is one exploration's result, as the scenarios write it.
type Verdict struct {
	Scenario string `json:"scenario"`
	// Test is the test that explores it, for a replay.
	Test        string `json:"test,omitempty"`
	Strategy    string `json:"strategy"`
	Seed        uint64 `json:"seed,omitempty"`
	Bound       int    `json:"bound,omitempty"`
	Verdict     string `json:"verdict"` // holds, VIOLATED, no verdict
	Kind        string `json:"kind,omitempty"`
	Preemptions int    `json:"preemptions,omitempty"`
	Schedule    string `json:"schedule,omitempty"`
	Schedules   int    `json:"schedules"`
	// Total is, for DFS, the runs over every bound up to Bound (each
	// bound runs the schedules of the ones below it again): the count
	// the search's budget caps.
	Total      int     `json:"total,omitempty"`
	Exhaustive bool    `json:"exhaustive,omitempty"`
	Seconds    float64 `json:"seconds"`
	// CPU is the process's CPU time over the exploration (user and
	// system, every goroutine: porcupine's too).
	CPU    float64 `json:"cpu_seconds,omitempty"`
	Detail string  `json:"detail,omitempty"`
	// Replayed is, for a violation, what its replay gave when the
	// campaign checked it (Options.Replays): "reproduced", or what went
	// wrong.
	Replayed string `json:"replayed,omitempty"`
}

// Run is one target at one version (and one tooth, or none).
type Run struct {
	Target   string    `json:"target"`
	Version  string    `json:"version"`
	Tooth    string    `json:"tooth,omitempty"`
	Verdicts []Verdict `json:"verdicts"`
	// Rewrite is the time to rewrite; Build the time of go test's build
	// and run, as measured around it.
	Rewrite float64 `json:"rewrite_seconds"`
	Test    float64 `json:"test_seconds"`
	// Unsupported counts the constructs the rewrite cannot control.
	Unsupported int    `json:"unsupported"`
	Err         string `json:"error,omitempty"`
	// Command is the command line that made the run.
	Command string `json:"command,omitempty"`
	// Dir is the scenarios' module, when kept.
	Dir string `json:"-"`
	// Log is the test's output when it failed to run (not a violation).
	Log string `json:"-"`
}

// Violated is the set of r's scenarios that some strategy found violated.
func (r Run) Violated() map[string]bool {
	out := map[string]bool{}
	for _, v := range r.Verdicts {
		if v.Verdict == "VIOLATED" {
			out[v.Scenario] = true
		}
	}
	return out
}

// Options configure a run.
type Options struct {
	// Root is tollgate's checkout (the module the scenarios require).
	Root string
	// Run selects scenarios (go test -run); empty: all.
	Run string
	// Keep keeps the temporary module (its path is in the error or log).
	Keep bool
	// Bound is DFS's preemption bound (0: the scenarios' own, 2).
	Bound int
	// Replays replays the schedules the table shows (Shown) with the
	// command it prints (go test -run '^Test$' -args -explore.replay=S in
	// the scenarios' module) and records whether each reproduced.
	Replays bool
	// Only, when set, are the verdicts of an earlier run of the same
	// target, version and tooth: nothing is explored, and the schedules
	// they show are replayed.
	Only []Verdict
}

// RunOne runs t's scenarios at version, on a copy with tooth applied
// when tooth is not empty.
func RunOne(t Target, version, tooth string, opt Options) Run {
	r := Run{Target: t.Name, Version: version, Tooth: tooth}
	if err := runOne(t, version, tooth, opt, &r); err != nil {
		r.Err = err.Error()
	}
	return r
}

func runOne(t Target, version, tooth string, opt Options, r *Run) error {
	dir, err := os.MkdirTemp("", "tollgate-target-"+t.Name+"-")
	if err != nil {
		return err
	}
	if !opt.Keep {
		defer os.RemoveAll(dir)
	}
	for _, sub := range []string{"common", t.Name} {
		if err := copyGo(sub, dir); err != nil {
			return err
		}
	}
	mod := fmt.Sprintf("module example.com/target\n\ngo 1.26.8\n\nrequire github.com/tollgate/tollgate v0.0.0\n\nreplace github.com/tollgate/tollgate => %s\n", opt.Root)
	if t.Module != "" {
		mod += fmt.Sprintf("\nrequire %s %s\n", t.Module, version)
	}
	if tooth != "" {
		patched, err := applyTooth(t, version, tooth, dir)
		if err != nil {
			return err
		}
		if patched != "" {
			mod += fmt.Sprintf("\nreplace %s => %s\n", t.Module, patched)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		return err
	}
	if out, err := goCmd(dir, "mod", "tidy"); err != nil {
		return fmt.Errorf("go mod tidy in %s: %v\n%s", dir, err, out)
	}
	start := time.Now()
	res, err := rewrite.Build(rewrite.Options{Dir: dir, Patterns: []string{"."}, OutDir: filepath.Join(dir, ".overlay")})
	if err != nil {
		return err
	}
	r.Rewrite = time.Since(start).Seconds()
	for _, n := range res.Notes {
		if n.Unsupported {
			r.Unsupported++
		}
	}
	if opt.Only != nil {
		r.Verdicts = opt.Only
		start = time.Now()
		replayShown(t, res, dir, r)
		r.Test = time.Since(start).Seconds()
		return nil
	}
	results := filepath.Join(dir, "results.jsonl")
	var flags []string
	if opt.Run != "" {
		flags = append(flags, "-run", opt.Run)
	}
	flags = append(flags, "-v", "-timeout", "20m")
	var log bytes.Buffer
	start = time.Now()
	env := []string{"TOLLGATE_TARGET_RESULTS=" + results}
	if opt.Bound > 0 {
		env = append(env, fmt.Sprintf("TOLLGATE_TARGET_BOUND=%d", opt.Bound))
	}
	if opt.Keep {
		fmt.Fprintf(&log, "the scenarios' module is kept in %s\n", dir)
		r.Dir = dir
	}
	testErr := rewrite.Test(res, dir, ".", flags, nil, env, &log, &log)
	r.Test = time.Since(start).Seconds()
	if r.Verdicts, err = readVerdicts(results); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if testErr != nil || len(r.Verdicts) == 0 {
		r.Log = log.String()
		return fmt.Errorf("go test of %s %s: %v (%d verdicts)", t.Name, version, testErr, len(r.Verdicts))
	}
	if opt.Replays {
		replayShown(t, res, dir, r)
	}
	return nil
}

// replayShown replays the schedules the table shows of r (see Shown).
func replayShown(t Target, res *rewrite.Result, dir string, r *Run) {
	for _, i := range Shown(*r) {
		v := &r.Verdicts[i]
		if v.Test == "" {
			v.Test = testOf(t, v.Scenario)
		}
		v.Replayed = replay(res, dir, *v)
	}
}

// Shown are the indexes of r's verdicts whose schedules the table shows:
// per scenario, DFS's violation, or when DFS found none the first PCT
// seed's.
func Shown(r Run) []int {
	var out []int
	for _, s := range scenarios(r) {
		first := -1
		for i, v := range r.Verdicts {
			if v.Scenario != s || v.Verdict != "VIOLATED" || v.Schedule == "" {
				continue
			}
			if v.Strategy == "dfs" {
				first = i
				break
			}
			if first < 0 {
				first = i
			}
		}
		if first >= 0 {
			out = append(out, first)
		}
	}
	return out
}

// testOf finds the test that explores scenario in t's scenario files
// (for verdicts written before they named their test): the test function
// whose body names the scenario first.
func testOf(t Target, scenario string) string {
	entries, _ := fs.ReadDir(files, "testdata/"+t.Name)
	for _, e := range entries {
		b, _ := files.ReadFile("testdata/" + t.Name + "/" + e.Name())
		src := string(b)
		at := strings.Index(src, "(t, "+strconv.Quote(scenario))
		if at < 0 {
			continue
		}
		fn := strings.LastIndex(src[:at], "\nfunc Test")
		if fn < 0 {
			continue
		}
		name := src[fn+len("\nfunc "):]
		if end := strings.IndexByte(name, '('); end > 0 {
			return name[:end]
		}
	}
	return ""
}

// replay runs v's schedule as the table says to, and tells whether the
// test failed again with v's kind of violation.
func replay(res *rewrite.Result, dir string, v Verdict) string {
	if v.Test == "" || v.Schedule == "" {
		return "not replayed: the verdict names no test or schedule"
	}
	var out bytes.Buffer
	err := rewrite.Test(res, dir, ".", []string{"-run", "^" + v.Test + "$", "-v"}, []string{"-explore.replay=" + v.Schedule}, nil, &out, &out)
	switch {
	case err == nil:
		return "NOT REPRODUCED: the replay passes"
	case !strings.Contains(out.String(), v.Kind):
		return fmt.Sprintf("NOT REPRODUCED: the replay failed without %q: %s", v.Kind, lastLines(out.String(), 5))
	}
	return "reproduced"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// copyGo copies testdata/sub's Go files to dir.
func copyGo(sub, dir string) error {
	entries, err := fs.ReadDir(files, "testdata/"+sub)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		b, err := files.ReadFile("testdata/" + sub + "/" + e.Name())
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// applyTooth applies the tooth's patch: to a copy of the target's module
// (returned, for a replace directive), or to the scenarios' directory
// when the target's source lives there.
func applyTooth(t Target, version, tooth, dir string) (string, error) {
	patch, err := files.ReadFile("testdata/" + t.Name + "/teeth/" + tooth + ".patch")
	if err != nil {
		return "", fmt.Errorf("targets: %s has no tooth %q (teeth: %s)", t.Name, tooth, strings.Join(t.Teeth(), ", "))
	}
	target := dir
	if t.Module != "" {
		out, err := goCmd(dir, "mod", "download", "-json", t.Module+"@"+version)
		if err != nil {
			return "", fmt.Errorf("go mod download %s@%s: %v\n%s", t.Module, version, err, out)
		}
		var info struct{ Dir string }
		if err := json.Unmarshal(out, &info); err != nil {
			return "", err
		}
		target = filepath.Join(dir, ".tooth")
		if out, err := exec.Command("cp", "-r", info.Dir, target).CombinedOutput(); err != nil {
			return "", fmt.Errorf("copy %s: %v\n%s", info.Dir, err, out)
		}
		if out, err := exec.Command("chmod", "-R", "u+w", target).CombinedOutput(); err != nil {
			return "", fmt.Errorf("chmod %s: %v\n%s", target, err, out)
		}
	}
	cmd := exec.Command("patch", "-p1", "--no-backup-if-mismatch")
	cmd.Dir, cmd.Stdin = target, bytes.NewReader(patch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("tooth %s does not apply to %s %s: %v\n%s", tooth, t.Name, version, err, out)
	}
	if t.Module == "" {
		return "", nil
	}
	return target, nil
}

func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	return cmd.CombinedOutput()
}

func readVerdicts(path string) ([]Verdict, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Verdict
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v Verdict
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Scenario < out[j].Scenario })
	return out, sc.Err()
}

// Merge returns the runs of old that fresh has not made again (the same
// target, version and tooth), followed by fresh's, ordered as All orders
// the targets (a run's order within its target is kept): a campaign
// replaces the rows of the runs it made and keeps the others'.
func Merge(old, fresh []Run) []Run {
	type key struct{ target, version, tooth string }
	ran := map[key]bool{}
	for _, r := range fresh {
		ran[key{r.Target, r.Version, r.Tooth}] = true
	}
	var out []Run
	for _, r := range old {
		if !ran[key{r.Target, r.Version, r.Tooth}] {
			out = append(out, r)
		}
	}
	out = append(out, fresh...)
	rank := map[string]int{}
	for i, t := range All {
		rank[t.Name] = i
	}
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].Target] < rank[out[j].Target] })
	return out
}

// Names are the targets that runs cover, as All orders them.
func Names(runs []Run) []string {
	has := map[string]bool{}
	for _, r := range runs {
		has[r.Target] = true
	}
	var out []string
	for _, t := range All {
		if has[t.Name] {
			out = append(out, t.Name)
		}
	}
	return out
}
