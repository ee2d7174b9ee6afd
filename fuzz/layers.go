package fuzz

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutant"
)

func init() {
	mutant.Register(mutant.Layer{Name: "rapid", Hunt: HuntRapid})
	mutant.Register(mutant.Layer{Name: "fuzz", Hunt: HuntFuzz})
}

// SequentiallyVisible reports whether f changes what some sequence of
// operations, applied one at a time, observes: whether f's patch names both
// sequential layers, rapid and fuzz, on its Caught-by line
// (fault.Fault.CaughtBy). The faults that do not (checked by running each
// layer against them: they survive every budget) only differ when two
// operations interleave:
//
//   - cr-two-write-enqueue: the staged row (reserved, with a payload) is
//     replaced by the enqueued one before the call returns;
//   - cr-reserve-no-cas: a plain store to a free slot equals the
//     compare-and-swap when nobody races;
//   - tb-plain-store: likewise for a take's commit, and tb-cas-one-half
//     (the unchecked half cannot change without a race);
//   - tb-fail-closed: a compare-and-swap never fails without a race;
//   - cr-one-scan: without a racing release, one scan and two agree;
//   - tb-trie-plain-append: needs two keys of equal 64-bit hash, racing;
//   - tb-floor-after-kill: the floor is raised before the reclaim returns,
//     so only a take inside the reclaim sees it late;
//   - tb-unlink-live: a take must commit between the reclaim's check and
//     its unlink; tb-compact-no-freeze: an insert must land between the
//     compaction's reads and its swap; tb-sweep-skips-frozen: two
//     reclaims must overlap;
//   - cr-twin-enqueue-lost: two enqueues of one reservation must overlap;
//   - cr-reserve-strands: a reserve's holder store before its
//     compare-and-swap is the winner's unless another reserve wins the slot
//     in between;
//   - cr-published-late: the box's published flag is read only by an
//     enqueue whose compare-and-swap another call's made fail;
//   - cr-enqueued-torn: the slot must be finished, reserved and enqueued
//     again between the list's two loads;
//   - tb-frozen-next-late: only another call's walk meets the frozen
//     wrapper before its next is written;
//   - tb-peek-torn: the bucket word must change between the peek's two
//     loads.
func SequentiallyVisible(f fault.Fault) bool {
	return mutant.Expected("rapid", f) && mutant.Expected("fuzz", f)
}

// killRecord collects what a hunt's hook saw.
type killRecord struct {
	mu    sync.Mutex
	first time.Time
	last  *Failure
}

func (k *killRecord) hook(f *Failure) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.first.IsZero() {
		k.first = time.Now()
	}
	k.last = f
}

// recorder is a rapid.TB that records instead of failing a test, so rapid
// can run from the mutants command.
type recorder struct {
	failed bool
	out    []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Name() string              { return "mutants" }
func (r *recorder) Logf(f string, a ...any)   { r.out = append(r.out, fmt.Sprintf(f, a...)) }
func (r *recorder) Log(a ...any)              { r.out = append(r.out, fmt.Sprint(a...)) }
func (r *recorder) Skipf(f string, a ...any)  { r.Logf(f, a...) }
func (r *recorder) Skip(a ...any)             { r.Log(a...) }
func (r *recorder) SkipNow()                  {}
func (r *recorder) Errorf(f string, a ...any) { r.failed = true; r.Logf(f, a...) }
func (r *recorder) Error(a ...any)            { r.failed = true; r.Log(a...) }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = true; r.Logf(f, a...) }
func (r *recorder) Fatal(a ...any)            { r.failed = true; r.Log(a...) }
func (r *recorder) FailNow()                  { r.failed = true }
func (r *recorder) Fail()                     { r.failed = true }
func (r *recorder) Failed() bool              { return r.failed }

// rapidSetting sets one of rapid's command-line settings for the duration
// of a hunt; restore puts every one back.
type rapidSettings map[string]string

func (s rapidSettings) set(name, value string) error {
	fl := flag.Lookup(name)
	if fl == nil {
		return fmt.Errorf("diff: rapid flag -%s is not registered", name)
	}
	if _, saved := s[name]; !saved {
		s[name] = fl.Value.String()
	}
	return flag.Set(name, value)
}

func (s rapidSettings) restore() {
	for name, v := range s {
		_ = flag.Set(name, v)
	}
}

var seedRE = regexp.MustCompile(`-rapid\.seed=(\d+)`)

// huntMu serialises hunts: rapid's settings are process-wide.
var huntMu sync.Mutex

// rapidTarget is a rapid machine and the test that runs it.
type rapidTarget struct {
	test string
	prop func(fault.Fault, Options, Hook) func(*rapid.T)
}

func rapidTargets(f fault.Fault) []rapidTarget {
	if f.Credits() {
		return []rapidTarget{{"TestRapidCredits", CreditsProp}}
	}
	return []rapidTarget{{"TestRapidTokenBucket", TokenBucketProp}, {"TestRapidHostile", HostileProp}}
}

// HuntShrinkTime bounds the time rapid spends shrinking a kill found by
// HuntRapid (the replay seed is known before shrinking starts; shrinking
// only makes the reported operation list shorter).
var HuntShrinkTime = 2 * time.Second

// RapidChecksPerRound is how many rapid test cases one round of a hunt
// runs before the budget is looked at again.
const RapidChecksPerRound = 50

// HuntRapid runs the rapid machines of f's primitive against a table
// carrying f, in rounds of RapidChecksPerRound cases from seeds derived
// from seed, until one fails or budget has passed. rapid shrinks a failure
// before it returns (at most HuntShrinkTime); Elapsed is the time to the first failure,
// before shrinking.
func HuntRapid(f fault.Fault, budget time.Duration, seed uint64) mutant.Outcome {
	return huntRapid(f, budget, seed, Options{})
}

func huntRapid(f fault.Fault, budget time.Duration, seed uint64, opts Options) mutant.Outcome {
	huntMu.Lock()
	defer huntMu.Unlock()
	settings := rapidSettings{}
	defer settings.restore()
	if err := settings.hunt(strconv.Itoa(RapidChecksPerRound)); err != nil {
		return mutant.Outcome{Seed: seed, Detail: err.Error()}
	}
	start := time.Now()
	targets := rapidTargets(f)
	for round := 0; round == 0 || time.Since(start) < budget; round++ {
		tg := targets[round%len(targets)]
		s := seed + uint64(round)*1_000_003
		if s == 0 {
			s = 1 // rapid reads seed 0 as "pick one at random"
		}
		if err := settings.set("rapid.seed", strconv.FormatUint(s, 10)); err != nil {
			return mutant.Outcome{Seed: seed, Detail: err.Error()}
		}
		var kill killRecord
		rec := &recorder{}
		rapid.Check(rec, tg.prop(f, opts, kill.hook))
		if !rec.failed {
			continue
		}
		out := mutant.Outcome{Killed: true, Seed: s, Elapsed: time.Since(start)}
		if !kill.first.IsZero() {
			out.Elapsed = kill.first.Sub(start)
		}
		msg := strings.Join(rec.out, "\n")
		if m := seedRE.FindStringSubmatch(msg); m != nil {
			out.Seed, _ = strconv.ParseUint(m[1], 10, 64)
		}
		if kill.last != nil {
			out.Property = kill.last.Property
			out.Detail = kill.last.Replay()
		} else {
			out.Property = "panic"
			out.Detail = msg
		}
		out.Replay = fmt.Sprintf("go test ./fuzz -run '^%s$' -diff.fault=%s -rapid.seed=%d -rapid.checks=1 -rapid.steps=30 -rapid.nofailfile", tg.test, f, out.Seed)
		if opts.PropertiesOnly {
			out.Replay += " -diff.props-only"
		}
		out.Rerun = rapidRerun(tg, opts, out.Seed) // rerun.go
		return out
	}
	return mutant.Outcome{Seed: seed, Elapsed: time.Since(start)}
}

// fuzzTarget is a fuzz target's name and its byte runner.
type fuzzTarget struct {
	name string
	run  func([]byte, fault.Fault, Options) *Failure
}

func fuzzTargets(f fault.Fault) []fuzzTarget {
	if f.Credits() {
		return []fuzzTarget{{"FuzzCredits", RunCreditsBytes}}
	}
	return []fuzzTarget{{"FuzzTokenBucket", RunTokenBucketBytes}, {"FuzzHostile", RunHostileBytes}}
}

// RandomInput is the index-th random input of a fuzz hunt from seed: 1 to
// 1024 bytes from a PCG stream, so a kill replays from (seed, index).
func RandomInput(seed uint64, index int) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(index)))
	b := make([]byte, 1+r.IntN(1024))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// HuntFuzz is the fuzz layer: go test -fuzz cannot run inside a binary, so
// it runs the fuzz targets' decoders over their committed seed corpora, then
// over random inputs (RandomInput) until one fails or budget has passed.
// A failing input is written as a corpus file under
// $TMPDIR/tollgate-mutants/<Target>/ and the outcome names its path.
func HuntFuzz(f fault.Fault, budget time.Duration, seed uint64) mutant.Outcome {
	return huntFuzz(f, budget, seed, Options{})
}

func huntFuzz(f fault.Fault, budget time.Duration, seed uint64, opts Options) mutant.Outcome {
	start := time.Now()
	targets := fuzzTargets(f)
	kill := func(tg fuzzTarget, input []byte, fail *Failure, how string) mutant.Outcome {
		out := fuzzKill(f, tg, input, fail, how, seed, opts) // rerun.go
		out.Elapsed = time.Since(start)
		return out
	}
	for _, tg := range targets {
		seeds, err := Seeds(tg.name)
		if err != nil {
			return mutant.Outcome{Seed: seed, Detail: err.Error()}
		}
		for _, s := range seeds {
			if fail := tg.run(s.Input, f, opts); fail != nil {
				return kill(tg, s.Input, fail, "corpus entry "+tg.name+"/"+s.Name)
			}
		}
	}
	for i := 0; time.Since(start) < budget; i++ {
		tg := targets[i%len(targets)]
		input := RandomInput(seed, i)
		if fail := tg.run(input, f, opts); fail != nil {
			return kill(tg, input, fail, fmt.Sprintf("random input %d of seed %d", i, seed))
		}
	}
	return mutant.Outcome{Seed: seed, Elapsed: time.Since(start)}
}

func writeCrasher(target string, f fault.Fault, input []byte) (string, error) {
	dir := filepath.Join(os.TempDir(), "tollgate-mutants", target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%016x", f, fnv64(input)))
	return path, os.WriteFile(path, Format(input), 0o644)
}

func fnv64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
