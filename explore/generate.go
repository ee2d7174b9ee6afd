package explore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Scenarios describes the scenarios Generate draws for a Spec instead of
// its hand-written Threads, as Lincheck does: each scenario is Threads
// threads of Ops operations, every operation drawn by Op from a generator
// seeded by Seed and the scenario's index, so scenario i is the same
// whatever Count is. A failing scenario is shrunk before it is reported.
type Scenarios[In any] struct {
	// Threads and Ops are each scenario's thread count and operations per
	// thread (0: 2 and 2).
	Threads, Ops int
	// Op draws one operation's input.
	Op func(r *rand.Rand) In
	// Simpler, when set, returns simpler versions of an input, the
	// simplest first, for shrinking (nil: inputs stay as drawn; only
	// threads and operations are removed).
	Simpler func(in In) []In
	// Count is the number of scenarios drawn (0: DefaultScenarios).
	Count int
	// Seed draws them.
	Seed uint64
	// MaxShrinks caps the explorations spent shrinking a failure (0:
	// DefaultMaxShrinks).
	MaxShrinks int
}

// The defaults of Scenarios.
const (
	DefaultScenarios  = 50
	DefaultMaxShrinks = 300
)

// Generated is what Generate did.
type Generated[In any] struct {
	// Result is the exploration of the smallest failing scenario, or of
	// the last scenario explored when none failed.
	Result
	// Explored is the number of scenarios drawn and explored.
	Explored int
	// Index is the failing scenario's index in the draw, Drawn that
	// scenario as drawn, Shrunk the smallest failing scenario found from
	// it, and Ref names Shrunk for a replay (ScenarioRef).
	Index         int
	Drawn, Shrunk [][]In
	Ref           string
	// Shrinks is the number of explorations the shrinking took.
	Shrinks int
}

// Draw returns scenario i of sc: the same for every Count.
func (sc Scenarios[In]) Draw(i int) [][]In {
	threads, ops := sc.Threads, sc.Ops
	if threads <= 0 {
		threads = 2
	}
	if ops <= 0 {
		ops = 2
	}
	r := rand.New(rand.NewPCG(sc.Seed, uint64(i)))
	out := make([][]In, threads)
	for t := range out {
		out[t] = make([]In, ops)
		for k := range out[t] {
			out[t][k] = sc.Op(r)
		}
	}
	return out
}

func (sc Scenarios[In]) validate() error {
	switch {
	case sc.Op == nil:
		return errors.New("explore: Scenarios.Op is nil: it draws each operation's input")
	case sc.Threads < 0 || sc.Threads > 100:
		return fmt.Errorf("explore: Scenarios.Threads is %d: it must be 0 (2) to 100", sc.Threads)
	case sc.Ops < 0:
		return fmt.Errorf("explore: Scenarios.Ops is %d: it must not be negative", sc.Ops)
	case sc.Count < 0:
		return fmt.Errorf("explore: Scenarios.Count is %d: it must not be negative", sc.Count)
	case sc.MaxShrinks < 0:
		return fmt.Errorf("explore: Scenarios.MaxShrinks is %d: it must not be negative", sc.MaxShrinks)
	}
	return nil
}

// A shrink move turns a scenario into a smaller one: drop thread T ("tT"),
// drop operation I of thread T ("oT.I"), or replace that operation by the
// K-th of its Simpler versions ("sT.I.K").
type move struct {
	kind    byte
	t, i, k int
}

func (m move) String() string {
	switch m.kind {
	case 't':
		return "t" + strconv.Itoa(m.t)
	case 'o':
		return fmt.Sprintf("o%d.%d", m.t, m.i)
	}
	return fmt.Sprintf("s%d.%d.%d", m.t, m.i, m.k)
}

// apply returns s with m made, or false when m does not fit s.
func (sc Scenarios[In]) apply(s [][]In, m move) ([][]In, bool) {
	if m.t < 0 || m.t >= len(s) {
		return nil, false
	}
	out := make([][]In, len(s))
	for t := range s {
		out[t] = append([]In(nil), s[t]...)
	}
	switch m.kind {
	case 't':
		if len(s) < 2 {
			return nil, false
		}
		return append(out[:m.t], out[m.t+1:]...), true
	case 'o':
		if m.i < 0 || m.i >= len(s[m.t]) || len(s[m.t]) < 2 {
			return nil, false
		}
		out[m.t] = append(out[m.t][:m.i], out[m.t][m.i+1:]...)
		return out, true
	case 's':
		if sc.Simpler == nil || m.i < 0 || m.i >= len(s[m.t]) {
			return nil, false
		}
		simpler := sc.Simpler(s[m.t][m.i])
		if m.k < 0 || m.k >= len(simpler) {
			return nil, false
		}
		out[m.t][m.i] = simpler[m.k]
		return out, true
	}
	return nil, false
}

// moves lists the moves to try on s, the largest cut first: whole threads,
// then single operations, then simpler inputs.
func (sc Scenarios[In]) moves(s [][]In) []move {
	var out []move
	for t := len(s) - 1; t >= 0; t-- {
		out = append(out, move{kind: 't', t: t})
	}
	for t := range s {
		for i := len(s[t]) - 1; i >= 0; i-- {
			out = append(out, move{kind: 'o', t: t, i: i})
		}
	}
	if sc.Simpler != nil {
		for t := range s {
			for i := range s[t] {
				for k := range sc.Simpler(s[t][i]) {
					out = append(out, move{kind: 's', t: t, i: i, k: k})
				}
			}
		}
	}
	return out
}

// ScenarioRef is the scenario a reference names: "I" is scenario I as
// drawn, "I:m1,m2,…" the same with the shrink moves m1, m2, … made in turn
// (as Generated.Ref prints them).
func (sc Scenarios[In]) ScenarioRef(ref string) ([][]In, error) {
	idx, rest, moved := strings.Cut(ref, ":")
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 || moved && rest == "" {
		return nil, fmt.Errorf("explore: scenario %q: want an index, then optionally ':' and shrink moves", ref)
	}
	s := sc.Draw(i)
	if !moved {
		return s, nil
	}
	for _, f := range strings.Split(rest, ",") {
		m, err := parseMove(f)
		if err != nil {
			return nil, fmt.Errorf("explore: scenario %q: %v", ref, err)
		}
		var ok bool
		if s, ok = sc.apply(s, m); !ok {
			return nil, fmt.Errorf("explore: scenario %q: move %s does not fit the scenario it is made on", ref, f)
		}
	}
	return s, nil
}

func parseMove(f string) (move, error) {
	if f == "" {
		return move{}, errors.New("an empty shrink move")
	}
	parts := strings.Split(f[1:], ".")
	n := map[byte]int{'t': 1, 'o': 2, 's': 3}[f[0]]
	if n == 0 || len(parts) != n {
		return move{}, fmt.Errorf("shrink move %q: want tT, oT.I or sT.I.K", f)
	}
	v := make([]int, 3)
	for j, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			return move{}, fmt.Errorf("shrink move %q: %q is not an index", f, p)
		}
		v[j] = x
	}
	return move{kind: f[0], t: v[0], i: v[1], k: v[2]}, nil
}

// Generate explores Count scenarios drawn from sc, each with spec (its
// Threads replaced by the scenario's) and opt, and stops at the first that
// fails or cannot be given a verdict. A failing scenario is shrunk: every
// move that keeps it failing is made, largest cuts first, until none does
// (or MaxShrinks explorations have run), and the smallest is explored once
// more for the report. replay is the command a failure's report gives,
// with %s where "REF@SCHEDULE" goes ("" for none).
func Generate[T, In, Out, S any](spec Spec[T, In, Out, S], sc Scenarios[In], opt Options, replay string) Generated[In] {
	var g Generated[In]
	if err := sc.validate(); err != nil {
		g.Err = err
		return g
	}
	count, maxShrinks := sc.Count, sc.MaxShrinks
	if count == 0 {
		count = DefaultScenarios
	}
	if maxShrinks == 0 {
		maxShrinks = DefaultMaxShrinks
	}
	named := func(ref string) string {
		if spec.Name == "" {
			return "scenario " + ref
		}
		return spec.Name + ", scenario " + ref
	}
	fails := func(s [][]In) bool {
		return Explore(withThreads(spec, s, spec.Name), opt, "").Failure != nil
	}
	for i := 0; i < count; i++ {
		s := sc.Draw(i)
		r := Explore(withThreads(spec, s, named(strconv.Itoa(i))), opt, "")
		g.Explored++
		g.Result = r
		if r.Err != nil {
			g.Index, g.Drawn, g.Ref = i, s, strconv.Itoa(i)
			return g
		}
		if r.Failure == nil {
			continue
		}
		g.Index, g.Drawn = i, s
		var made []string
	shrink:
		for g.Shrinks < maxShrinks {
			for _, m := range sc.moves(s) {
				if g.Shrinks >= maxShrinks {
					break shrink
				}
				c, ok := sc.apply(s, m)
				if !ok {
					continue
				}
				g.Shrinks++
				if fails(c) {
					s = c
					made = append(made, m.String())
					continue shrink
				}
			}
			break
		}
		g.Shrunk, g.Ref = s, strconv.Itoa(i)
		if len(made) > 0 {
			g.Ref += ":" + strings.Join(made, ",")
		}
		final := withThreads(spec, s, named(g.Ref))
		tmpl := ""
		if replay != "" {
			tmpl = strings.Replace(replay, "%s", g.Ref+"@%s", 1)
		}
		g.Result = Explore(final, opt, tmpl)
		if g.Failure != nil {
			g.Failure.Report = fmt.Sprintf("scenario %d of seed %d, as drawn:\n%s\nshrunk in %d explorations to:\n%s\n%s",
				i, sc.Seed, describeScenario(spec, g.Drawn), g.Shrinks, describeScenario(spec, s), g.Failure.Report)
		}
		return g
	}
	return g
}

// withThreads is spec with the scenario s and the name name.
func withThreads[T, In, Out, S any](spec Spec[T, In, Out, S], s [][]In, name string) Spec[T, In, Out, S] {
	spec.Threads, spec.Name = s, name
	return spec
}

// describeScenario renders a scenario a thread a line.
func describeScenario[T, In, Out, S any](spec Spec[T, In, Out, S], s [][]In) string {
	var b strings.Builder
	for t, ops := range s {
		fmt.Fprintf(&b, "  T%d:", t)
		for _, in := range ops {
			b.WriteString(" " + spec.describe(in))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// CheckScenarios is Check over scenarios drawn from sc (Generate) instead
// of spec's Threads: it fails t with the smallest failing scenario, its
// shrinking and its schedule, or with why no verdict could be given. With
// -explore.replay REF@SCHEDULE (as the report's replay command passes it)
// it replays that schedule on the scenario REF names and logs its trace.
func CheckScenarios[T, In, Out, S any](t testing.TB, spec Spec[T, In, Out, S], sc Scenarios[In], opts ...Options) Generated[In] {
	t.Helper()
	if spec.Name == "" {
		spec.Name = t.Name()
	}
	if err := sc.validate(); err != nil {
		t.Fatal(err)
	}
	requireRewritten(t, spec)
	if *flagReplay != "" {
		ref, schedule, ok := strings.Cut(*flagReplay, "@")
		if !ok {
			t.Fatalf("explore: -explore.replay %s: a generated scenario replays as REF@SCHEDULE, as the failure's replay command prints it", *flagReplay)
		}
		s, err := sc.ScenarioRef(ref)
		if err != nil {
			t.Fatal(err)
		}
		spec.Threads = s
		spec.Name += ", scenario " + ref
		*flagReplay = schedule
		defer func() { *flagReplay = ref + "@" + schedule }()
		r := Check(t, spec, opts...)
		return Generated[In]{Result: r, Explored: 1, Shrunk: s, Ref: ref}
	}
	var opt Options
	if len(opts) > 0 {
		opt = opts[0]
	}
	opt = withFlags(opt)
	g := Generate(spec, sc, opt, replayCommand(t))
	switch {
	case g.Err != nil:
		t.Fatalf("explore %s, scenario %s: %s", spec.Name, g.Ref, g.Summary())
	case g.Failure != nil:
		t.Fatalf("explore %s: %s", spec.Name, g.Failure.Report)
	default:
		t.Logf("explore %s: %d scenarios, no violation (the last: %s)", spec.Name, g.Explored, g.Summary())
	}
	return g
}
