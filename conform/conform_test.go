package conform

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tollgate/tollgate/internal/testwait"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/testlong"
)

// The test binary doubles as a misbehaving driver: TestMain runs it as one
// when TOLLGATE_FAKE_DRIVER names a behaviour.
func TestMain(m *testing.M) {
	if b := os.Getenv("TOLLGATE_FAKE_DRIVER"); b != "" {
		fakeDriver(b)
		os.Exit(0)
	}
	// The parallel tests mostly wait for drivers that are slow or silent
	// on purpose: eight run at once.
	testwait.Parallel(8)
	build.Main(m)
}

// fakeDriver answers hello correctly, then misbehaves on the first other
// request as the behaviour says.
func fakeDriver(behaviour string) {
	buf := make([]byte, 1<<16)
	n := 0
	for {
		k, err := os.Stdin.Read(buf[n:])
		n += k
		for {
			i := bytes.IndexByte(buf[:n], '\n')
			if i < 0 {
				break
			}
			line := string(buf[:i])
			copy(buf, buf[i+1:n])
			n -= i + 1
			var id int64
			fmt.Sscanf(line[strings.Index(line, `"id":`)+5:], "%d", &id)
			if strings.Contains(line, `"hello"`) {
				switch behaviour {
				case "slow-start":
					time.Sleep(2 * time.Second) // a runtime starting on a loaded machine
				case "silent-hello":
					time.Sleep(time.Hour)
				}
				if behaviour == "crash-hello" {
					fmt.Fprintln(os.Stderr, "fake driver: misbehaving with", behaviour)
					os.Exit(3)
				}
				prims := `["tb","cr"]`
				if behaviour == "no-primitives" {
					prims = `[]`
				}
				fmt.Printf(`{"id":%d,"ok":true,"protocol":2,"primitives":%s,"name":"fake"}`+"\n", id, prims)
				continue
			}
			fmt.Fprintln(os.Stderr, "fake driver: misbehaving with", behaviour)
			switch behaviour {
			case "crash":
				os.Exit(3)
			case "garbage":
				fmt.Println("this is not json")
			case "unknown-id":
				fmt.Printf(`{"id":%d,"ok":true}`+"\n", id+1000)
			case "silent":
				time.Sleep(time.Hour) // never answers, never exits
			}
		}
		if err != nil {
			return
		}
	}
}

// fakeConfig runs this test binary as a driver misbehaving as behaviour
// says. The behaviour is passed through env(1) rather than this process's
// environment, so the tests of fake drivers can run in parallel: most of
// their time is spent waiting out a driver's timeouts.
func fakeConfig(t *testing.T, behaviour string) Config {
	timeout := 5 * time.Second // generous: hello must pass even on a loaded machine
	if behaviour == "silent" {
		timeout = 1500 * time.Millisecond
	}
	return Config{Argv: []string{"env", "TOLLGATE_FAKE_DRIVER=" + behaviour, os.Args[0]}, Seed: 1, Budget: 200 * time.Millisecond, Clients: 2,
		Timeout: timeout, Suites: []string{SuiteVectors}, Primitives: []string{PrimTokenBucket}, Dir: t.TempDir()}
}

// TestBrokenDrivers: a driver that crashes, prints garbage, answers an
// unknown id or stops answering gets an error naming the request, and the
// harness neither hangs nor leaves the child running.
func TestBrokenDrivers(t *testing.T) {
	t.Parallel() // mostly waiting: "silent" waits out its 1.5 s timeout
	for _, tc := range []struct{ behaviour, kind string }{
		{"crash", "exited"}, {"garbage", "garbage"}, {"unknown-id", "unknown_id"}, {"silent", "timeout"},
	} {
		t.Run(tc.behaviour, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			rep := Run(fakeConfig(t, tc.behaviour))
			if rep.OK() {
				t.Fatal("a broken driver passed")
			}
			var out bytes.Buffer
			rep.Print(&out, "")
			text := out.String()
			if !strings.Contains(text, "driver "+tc.kind) || !strings.Contains(text, `"op":"tb.`) {
				t.Fatalf("report does not name the breach %q and the request:\n%s", tc.kind, text)
			}
			if !strings.Contains(text, "fake driver: misbehaving") {
				t.Errorf("report lacks the driver's stderr:\n%s", text)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestSlowStartingDriver: the hello has a start-up budget of its own, so a
// driver that takes longer to start than the per-request timeout still
// runs; one that never says hello fails within that budget, naming it.
func TestSlowStartingDriver(t *testing.T) {
	t.Parallel()
	// Two waits (a 2 s start, a 1.5 s hello timeout), side by side.
	t.Run("SlowStart", func(t *testing.T) {
		t.Parallel()
		cfg := fakeConfig(t, "slow-start")
		cfg.Timeout = 500 * time.Millisecond // shorter than the 2 s start
		conn, hello, err := connect(cfg)
		if err != nil {
			t.Fatalf("a driver answering hello after 2 s, within the start budget: %v", err)
		}
		conn.Close()
		if hello.Name != "fake" {
			t.Errorf("hello %+v, want the fake driver's", hello)
		}
	})
	t.Run("SilentHello", func(t *testing.T) {
		t.Parallel()
		cfg := fakeConfig(t, "silent-hello")
		cfg.Timeout, cfg.StartTimeout = 500*time.Millisecond, 1500*time.Millisecond
		start := time.Now()
		rep := Run(cfg)
		if rep.Err == nil || !strings.Contains(rep.Err.Error(), "hello") || !strings.Contains(rep.Err.Error(), "no answer within 1.5s") {
			t.Fatalf("a driver that never says hello: error %v, want a hello timeout of 1.5s", rep.Err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("took %v", d)
		}
	})
	if err := (&Config{Argv: []string{"x"}, Budget: 1, Clients: 1, Timeout: 1, StartTimeout: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "start timeout") {
		t.Errorf("a negative start timeout: %v, want an error naming it", err)
	}
}

// TestNothingRunFails: a driver that lists no primitives runs no case, and
// a run of no case fails, saying why.
func TestNothingRunFails(t *testing.T) {
	cfg := fakeConfig(t, "no-primitives")
	cfg.Primitives = nil
	rep := Run(cfg)
	var out bytes.Buffer
	rep.Print(&out, "")
	if rep.OK() {
		t.Fatalf("a driver with no primitives passed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "no case ran") {
		t.Fatalf("the report does not say no case ran:\n%s", out.String())
	}
}

// TestCasesNotRunCounted: when the driver crashes, the vectors it never saw
// are counted as not run and named, not left out of the count.
func TestCasesNotRunCounted(t *testing.T) {
	golden, err := GenerateVectors()
	if err != nil {
		t.Fatal(err)
	}
	var total int
	var last string
	for _, f := range golden {
		if f.Primitive == PrimTokenBucket {
			total += len(f.Cases)
			last = f.Cases[len(f.Cases)-1].Name
		}
	}
	rep := Run(fakeConfig(t, "crash"))
	var out bytes.Buffer
	rep.Print(&out, "")
	r := rep.Results[0]
	if r.Cases != total || r.Passed+r.Failed+r.Unknown+len(r.NotRun) != total || len(r.NotRun) != total-1 {
		t.Fatalf("cases %d, passed %d, failed %d, not run %d; want %d cases, %d not run:\n%s",
			r.Cases, r.Passed, r.Failed, len(r.NotRun), total, total-1, out.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("%d of %d cases not run", total-1, total)) || !strings.Contains(out.String(), last) {
		t.Fatalf("the report does not count and name the cases not run:\n%s", out.String())
	}
}

// TestErrorPrefixedOnce: a driver that dies at hello is reported with one
// "conform:" prefix, not one per layer of the error.
func TestErrorPrefixedOnce(t *testing.T) {
	rep := Run(fakeConfig(t, "crash-hello"))
	var out bytes.Buffer
	rep.Print(&out, "")
	first, _, _ := strings.Cut(out.String(), "\n")
	if rep.OK() || strings.Count(first, "conform:") != 1 || strings.Contains(first, "exited: the driver exited") ||
		!strings.Contains(first, "hello: driver exited") {
		t.Fatalf("want one prefix per message:\n%s", out.String())
	}
}

// TestConnReapsChild: Close kills a driver that ignores end of input.
func TestConnReapsChild(t *testing.T) {
	t.Parallel() // waiting on a driver that never answers
	// The timeout only bounds the hello: a child test binary, started under
	// -race on a loaded machine, took longer than 1 s to answer it in CI.
	c, err := Start(fakeConfig(t, "silent").Argv, 30*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(Request{Op: OpHello, Protocol: ProtocolVersion}); err != nil {
		t.Fatal(err)
	}
	c.grace = 100 * time.Millisecond // the driver never exits on its own: no need to wait closeGrace
	go c.Send(Request{Op: OpPeek, Table: "t", Key: I("k"), Capacity: F(1), RefillPerSecond: F(1), NowMs: I(int64(0))})
	time.Sleep(50 * time.Millisecond)
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung")
	}
	if c.cmd.ProcessState == nil {
		t.Fatal("the child was not reaped")
	}
}

func serveWith(faults fault.Fault) func(io.Reader, io.Writer, io.Writer) error {
	return func(in io.Reader, out io.Writer, logw io.Writer) error { return ServeGo(in, out, logw, faults) }
}

// TestGoDriverPasses: the Go driver, in process, passes every suite: for
// 250 ms each, 700 ms with -long (CI also runs conform for 3 s a suite).
func TestGoDriverPasses(t *testing.T) {
	t.Parallel() // beside the fake drivers' tests, which mostly wait
	budget := 250 * time.Millisecond
	if testlong.Enabled() {
		budget = 700 * time.Millisecond
	}
	rep := Run(Config{Serve: serveWith(fault.None), Seed: 7, Budget: budget, Clients: 8,
		Timeout: 10 * time.Second, Dir: t.TempDir()})
	var out bytes.Buffer
	rep.Print(&out, "")
	if !rep.OK() {
		t.Fatalf("the Go driver failed:\n%s", out.String())
	}
	for _, r := range rep.Results {
		if r.Cases == 0 {
			t.Errorf("%s ran no case", r.Suite)
		}
	}
	t.Log("\n" + out.String())
}

// TestMutantDriversFail: the Go driver built with each fault the sequential
// suites can see is reported failing, with a minimal case in protocol form
// that names the invariant its first differing answer breaks
// (model.TBDivergence, model.CrDivergence). Each row names the suite that
// must catch it, the case and the invariants the report may name.
func TestMutantDriversFail(t *testing.T) {
	build.Need(t)
	for _, tc := range []struct {
		fault  fault.Fault
		suite  string
		want   string   // a failing case name
		breaks []string // the invariants the failure may name
	}{
		{fault.Named("tb-timestamp-regress"), "tb/vectors", "T4/stale-clock-does-not-move-last", []string{"T4"}},
		{fault.Named("tb-seed-ceil"), "tb/vectors", "T7/retry-after-exact-not-closed-form", []string{"T7"}},
		{fault.Named("tb-no-clamp"), "tb/vectors", "T8/limits-per-call-clamp", []string{"T8"}},
		{fault.Named("tb-timestamp-regress"), "tb/random", "session", []string{"T4", "T5"}},
		{fault.Named("tb-seed-ceil"), "tb/random", "session", []string{"T7"}},
		{fault.Named("tb-no-clamp"), "tb/random", "session", []string{"T1", "T6", "T8"}},
		{fault.Named("cr-no-epoch-pin"), "cr/vectors", "C3/epochs-never-reused", []string{"C3"}},
		{fault.Named("cr-no-epoch-pin"), "cr/random", "session", []string{"C3"}},
		{fault.Named("cr-release-no-holder"), "cr/vectors", "C9/release-holder-epoch-reserved-only", []string{"C9"}},
		{fault.Named("cr-release-no-holder"), "cr/random", "session", []string{"C9"}},
		{fault.Named("cr-finish-blind"), "cr/vectors", "C8/finish-exactly-once", []string{"C8", "C3"}},
		{fault.Named("cr-sweep-all"), "cr/vectors", "C10/sweep-dead-reserved-only", []string{"C10"}},
		{fault.Named("cr-class-off-by-one"), "cr/vectors", "C1/class-bounds", []string{"C1"}},
	} {
		t.Run(tc.fault.String()+"/"+tc.suite, func(t *testing.T) {
			prim, suite, _ := strings.Cut(tc.suite, "/")
			rep := Run(Config{Serve: serveWith(tc.fault), Seed: 3, Budget: 2 * time.Second, Clients: 4,
				Timeout: 10 * time.Second, Suites: []string{suite}, Primitives: []string{prim}, Dir: t.TempDir()})
			var out bytes.Buffer
			rep.Print(&out, "replay --seed %d --suites %s")
			for _, r := range rep.Results {
				if r.Suite != tc.suite {
					continue
				}
				for _, f := range r.Failures {
					if !strings.Contains(f.Case, tc.want) || len(f.Sent) == 0 || f.Got == "" {
						continue
					}
					if suite == SuiteRandom && !strings.Contains(out.String(), "shrunk from") {
						t.Errorf("random failure not shrunk:\n%s", out.String())
					}
					if !slices.Contains(tc.breaks, f.Breaks.Invariant) || !strings.Contains(out.String(), ": breaks "+f.Breaks.Invariant) {
						t.Fatalf("%s: the report names %q, want one of %v:\n%s", tc.fault, f.Breaks.Invariant, tc.breaks, out.String())
					}
					t.Logf("%s killed by %s, breaks %s: %d requests\n%s", tc.fault, tc.suite, f.Breaks.Invariant, len(f.Sent), out.String())
					return
				}
			}
			t.Fatalf("%s survived %s (want a failure of %q):\n%s", tc.fault, tc.suite, tc.want, out.String())
		})
	}
}

// TestConcurrentSuiteKills: the concurrent suite reports these token-bucket
// mutants as not linearizable (T11) and writes porcupine's visualization.
// tb-fail-closed and tb-plain-store need contention: 16 clients.
func TestConcurrentSuiteKills(t *testing.T) {
	build.Need(t)
	for _, f := range []fault.Fault{fault.Named("tb-timestamp-regress"), fault.Named("tb-fail-closed"), fault.Named("tb-plain-store")} {
		t.Run(f.String(), func(t *testing.T) {
			dir := t.TempDir()
			rep := Run(Config{Serve: serveWith(f), Seed: 5, Budget: 3 * time.Second, Clients: 16,
				Timeout: 10 * time.Second, Suites: []string{SuiteConcurrent}, Primitives: []string{PrimTokenBucket}, Dir: dir})
			for _, r := range rep.Results {
				if r.Suite == "tb/concurrent" && r.Failed == 1 {
					f := r.Failures[0]
					path := strings.Fields(f.Artifact)[0]
					if _, err := os.Stat(path); err != nil {
						t.Fatalf("visualization %q: %v", f.Artifact, err)
					}
					var out bytes.Buffer
					rep.Print(&out, "")
					if n := strings.Count(out.String(), "no linearization"); n != 1 {
						t.Errorf("the report says \"no linearization\" %d times, want once:\n%s", n, out.String())
					}
					checkProtocolForm(t, f, out.String(), `{"op":"tb.`)
					t.Logf("%s: %s after %d sessions; %s", f.Case, f.Got, r.Cases, f.Artifact)
					return
				}
			}
			var out bytes.Buffer
			rep.Print(&out, "")
			t.Fatalf("%s survived the concurrent suite:\n%s", f, out.String())
		})
	}
}

// checkProtocolForm: a failed concurrent session prints its smallest
// failing part as protocol requests and answers, and writes the session in
// protocol form next to porcupine's files (spec/PORTING.md), never as the
// model's Go structs.
func checkProtocolForm(t *testing.T, f *CaseFailure, report, op string) {
	t.Helper()
	if !strings.Contains(report, "smallest failing part") || !strings.Contains(report, op) || !strings.Contains(report, ` → {"ok":`) {
		t.Errorf("the report shows no failing part in protocol form:\n%s", report)
	}
	_, path, ok := strings.Cut(f.Artifact, "in protocol form: ")
	if !ok {
		t.Fatalf("no protocol-form file in %q", f.Artifact)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var hist ProtocolHistory
	if err := json.Unmarshal(data, &hist); err != nil {
		t.Fatal(err)
	}
	var first bytes.Buffer
	if len(hist.Part) > 0 {
		_ = json.Compact(&first, hist.Part[0].Send)
	}
	if len(hist.Part) == 0 || len(hist.Ops) < len(hist.Part) || !strings.HasPrefix(first.String(), op) || strings.Contains(string(data), `"Kind"`) {
		t.Errorf("%s is not the session in protocol form:\n%.600s", path, data)
	}
}

// TestConcurrentCreditsFailureInProtocolForm: a credit-table mutant that
// only concurrency shows fails the concurrent suite, and the failure shows
// its session in protocol form.
func TestConcurrentCreditsFailureInProtocolForm(t *testing.T) {
	build.Need(t)
	dir := t.TempDir()
	rep := Run(Config{Serve: serveWith(fault.Named("cr-reserve-no-cas")), Seed: 3, Budget: 3 * time.Second, Clients: 16,
		Timeout: 10 * time.Second, Suites: []string{SuiteConcurrent}, Primitives: []string{PrimCredits}, Dir: dir})
	var out bytes.Buffer
	rep.Print(&out, "")
	for _, r := range rep.Results {
		if r.Suite == "cr/concurrent" && r.Failed > 0 {
			checkProtocolForm(t, r.Failures[0], out.String(), `{"op":"cr.`)
			return
		}
	}
	t.Fatalf("cr-reserve-no-cas survived the concurrent suite:\n%s", out.String())
}

// serialServe is the Go driver behind a front that hands it one request at
// a time and waits for its answer before reading the next: a driver that
// serialises every request.
func serialServe(in io.Reader, out io.Writer, logw io.Writer) error {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeGo(inR, outW, logw, fault.None); outW.Close() }()
	answers := bufio.NewScanner(outR)
	requests := bufio.NewScanner(in)
	for requests.Scan() {
		if _, err := io.WriteString(inW, requests.Text()+"\n"); err != nil {
			return err
		}
		if !answers.Scan() {
			return errors.New("serial driver: no answer")
		}
		if _, err := io.WriteString(out, answers.Text()+"\n"); err != nil {
			return err
		}
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	return <-done
}

// TestSerialDriverWarned: a driver that runs one request at a time passes
// the concurrent suite (its histories are linearizable) but the report
// says that no operation overlapped another in it.
func TestSerialDriverWarned(t *testing.T) {
	rep := Run(Config{Serve: serialServe, Seed: 1, Budget: 300 * time.Millisecond, Clients: 8,
		Timeout: 10 * time.Second, Suites: []string{SuiteConcurrent}, Primitives: []string{PrimTokenBucket}, Dir: t.TempDir()})
	var out bytes.Buffer
	rep.Print(&out, "")
	if !strings.Contains(out.String(), "warning: tb/concurrent: no operation overlapped another") {
		t.Fatalf("no warning for a serial driver:\n%s", out.String())
	}
}

// protocol1Serve is the Go driver behind a front that speaks protocol 1:
// its hello answers version 1 and a tb.reclaim, which version 1 lacks, is
// answered bad_request without reaching the driver.
func protocol1Serve(in io.Reader, out io.Writer, logw io.Writer) error {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeGo(inR, outW, logw, fault.None); outW.Close() }()
	var mu sync.Mutex
	write := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		io.WriteString(out, line+"\n")
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		answers := bufio.NewScanner(outR)
		for answers.Scan() {
			write(strings.Replace(answers.Text(), `"protocol":2`, `"protocol":1`, 1))
		}
	}()
	requests := bufio.NewScanner(in)
	for requests.Scan() {
		line := requests.Text()
		var req Request
		if json.Unmarshal([]byte(line), &req) == nil && req.Op == OpReclaim {
			write(fmt.Sprintf(`{"id":%d,"ok":false,"error":"bad_request","message":"unknown op"}`, req.ID))
			continue
		}
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			return err
		}
	}
	inW.Close()
	err := <-done
	<-copied
	return err
}

// TestProtocol1Driver: a driver of protocol 1 is checked on everything but
// tb.reclaim, and the report names the vectors it skipped.
func TestProtocol1Driver(t *testing.T) {
	rep := Run(Config{Serve: protocol1Serve, Seed: 1, Budget: 300 * time.Millisecond, Clients: 4,
		Timeout: 10 * time.Second, Primitives: []string{PrimTokenBucket}, Dir: t.TempDir()})
	var out bytes.Buffer
	rep.Print(&out, "")
	if !rep.OK() {
		t.Fatalf("a protocol 1 driver failed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "protocol 1") || !strings.Contains(out.String(), "skipped") ||
		!strings.Contains(out.String(), "T12/reclaim-forgets-full-buckets") {
		t.Fatalf("the report does not name the reclaim vectors skipped:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}

// TestProgressLines: a long suite writes progress lines while it runs.
func TestProgressLines(t *testing.T) {
	var progress bytes.Buffer
	rep := Run(Config{Serve: serveWith(fault.None), Seed: 1, Budget: 200 * time.Millisecond, Clients: 2,
		Timeout: 10 * time.Second, Suites: []string{SuiteRandom}, Primitives: []string{PrimTokenBucket}, Dir: t.TempDir(),
		Progress: &progress, ProgressEvery: time.Nanosecond})
	if !rep.OK() || !strings.Contains(progress.String(), "tb/random") || !strings.Contains(progress.String(), "sessions") {
		t.Fatalf("no progress lines:\n%s", progress.String())
	}
}

// TestLayerReplayLine: the conform layer of the mutants table gives the
// replay command in the go run ./cmd/tollgate form the other layers use.
func TestLayerReplayLine(t *testing.T) {
	build.Need(t)
	out := conformHunt(fault.Named("tb-timestamp-regress"), time.Second, 1)
	want := "go run ./cmd/tollgate conform --seed 1 --suites vectors --primitives tb -- go run ./cmd/tollgate driver --mutant tb-timestamp-regress"
	if !out.Killed || out.Replay != want {
		t.Fatalf("replay %q, want %q", out.Replay, want)
	}
}

// TestPrintSkippedSpaced: a skipped suite's reason is set off from the
// table's last column (issue 45 saw "-(skipped: ...)").
func TestPrintSkippedSpaced(t *testing.T) {
	rep := &Report{Driver: "d", Primitives: []string{"tb"}, Protocol: ProtocolVersion, Seed: 1,
		Results: []SuiteResult{{Suite: "cr/vectors", Skipped: "the driver does not support cr"}}}
	var out strings.Builder
	rep.Print(&out, "")
	if !strings.Contains(out.String(), "- (skipped: the driver does not support cr)") {
		t.Errorf("the skipped suite's reason is not set off by a space:\n%s", out.String())
	}
}
