package linearizability

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

// flaky wraps a backend: every unknownEvery-th call is made but answered
// with ErrUnknown, every notRunEvery-th is not made (ErrNotRun), and call
// number breakAt (if > 0) and every later one fail with errBroken.
type flaky[In, Out any] struct {
	b                         Backend[In, Out]
	unknownEvery, notRunEvery int64
	breakAt                   int64
	calls, unknowns, notRuns  atomic.Int64
}

var errBroken = errors.New("the backend broke")

func (f *flaky[In, Out]) Do(client int, in In) (Out, error) {
	n := f.calls.Add(1)
	var zero Out
	switch {
	case f.breakAt > 0 && n >= f.breakAt:
		return zero, fmt.Errorf("call %d: %w", n, errBroken)
	case f.notRunEvery > 0 && n%f.notRunEvery == 0:
		f.notRuns.Add(1)
		return zero, fmt.Errorf("call %d: %w", n, ErrNotRun)
	case f.unknownEvery > 0 && n%f.unknownEvery == 0:
		f.unknowns.Add(1)
		out, _ := f.b.Do(client, in) // made, but the answer is lost
		_ = out
		return zero, fmt.Errorf("call %d: timed out: %w", n, ErrUnknown)
	}
	return f.b.Do(client, in)
}

// TestUnknownOutcomesAreRecordedAsUnknown: a call whose outcome cannot be
// known is recorded as unknown, never as failed, and the history still
// checks; a call that was not made is not recorded.
func TestUnknownOutcomesAreRecordedAsUnknown(t *testing.T) {
	w := TBWorkloads()[2] // many-keys
	fb := &flaky[model.TBInput[string], model.TBOutput]{b: InProcessTB(fault.None), unknownEvery: 17, notRunEvery: 23}
	h, err := RecordTokenBucket(w, fb, 1)
	if err != nil {
		t.Fatal(err)
	}
	unknown := 0
	for _, op := range h.Ops {
		if op.Unknown {
			unknown++
		}
	}
	if want := int(fb.unknowns.Load()); unknown != want || want == 0 {
		t.Fatalf("%d unknown operations recorded, the backend answered %d calls with ErrUnknown", unknown, want)
	}
	if got, want := len(h.Ops), int(fb.calls.Load()-fb.notRuns.Load()); got != want {
		t.Fatalf("%d operations recorded, want %d (calls %d, not run %d)", got, want, fb.calls.Load(), fb.notRuns.Load())
	}
	rep, err := CheckTokenBucket(h, Options{Timeout: 20 * time.Second})
	if err != nil || rep.Result != Ok {
		t.Fatalf("a history with %d unknown outcomes: %v %v %s", unknown, err, rep.Result, rep.Detail)
	}

	wc := CrWorkloads()[0] // cycling
	fc := &flaky[model.CrInput[Payload], model.CrOutput[Payload]]{b: InProcessCr(fault.None), unknownEvery: 29}
	hc, err := RecordCredits(wc, fc, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := hc.Validate(); err != nil {
		// An unknown reserve cannot be checked (its token is unknown); the
		// recorder must say so through Validate, not record a failure.
		t.Logf("credits history with unknown outcomes refused by Validate, as documented: %v", err)
		return
	}
	rc, err := CheckCredits(hc, Options{Timeout: 20 * time.Second})
	if err != nil || rc.Result != Ok {
		t.Fatalf("credits history with unknown outcomes: %v %v %s", err, rc.Result, rc.Detail)
	}
}

// TestBrokenBackendStopsTheRecording: any other error stops the recording,
// which returns it, and no client goroutine is left spinning.
func TestBrokenBackendStopsTheRecording(t *testing.T) {
	for _, w := range CrWorkloads() {
		fc := &flaky[model.CrInput[Payload], model.CrOutput[Payload]]{b: InProcessCr(fault.None), breakAt: 40}
		done := make(chan error, 1)
		go func() {
			_, err := RecordCredits(w, fc, 1)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, errBroken) {
				t.Fatalf("%s: RecordCredits returned %v, want the backend's error", w.Name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the recording did not stop within 30 s of its backend breaking", w.Name)
		}
	}
	ft := &flaky[model.TBInput[string], model.TBOutput]{b: InProcessTB(fault.None), breakAt: 40}
	if _, err := RecordTokenBucket(TBWorkloads()[0], ft, 1); !errors.Is(err, errBroken) {
		t.Fatalf("RecordTokenBucket returned %v, want the backend's error", err)
	}
}
