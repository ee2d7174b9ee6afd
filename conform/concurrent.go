package conform

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// Concurrent sessions (suite "concurrent"): N clients of the driver issue
// requests at once, each client with one request outstanding; the harness
// stamps every request when it is written and every answer when it is read,
// decodes the answers into the model's outputs, and hands the history to the
// porcupine models of package linearizability (T11, C16). Nothing about the
// primitives is decided here.

// The history's clock is linearizability.Stamps: call stamps are drawn
// before a request is written and return stamps after its answer is read, so
// the interval [call, return] contains the moment the driver performed it.

// TBAnswer decodes a driver's token-bucket answer into the model's output.
func TBAnswer(in model.TBInput[string], r Response) (model.TBOutput, error) {
	if r.Error == ErrInvalidArgument {
		return model.TBOutput{Invalid: r.Field}, nil
	}
	if r.Error != "" && !(r.Error == ErrRateLimited && in.Kind == model.TBTake) {
		return model.TBOutput{}, fmt.Errorf("error %q is not an answer of %s", r.Error, in.Kind)
	}
	var out model.TBOutput
	out.OK = r.OK
	missing := func(f string) error { return fmt.Errorf("answer of %s lacks field %s", in.Kind, f) }
	switch in.Kind {
	case model.TBTake:
		if r.OK {
			if r.Remaining == nil {
				return out, missing("remaining")
			}
			out.Remaining = float64(*r.Remaining)
		}
	case model.TBPeek:
		if r.Tokens == nil {
			return out, missing("tokens")
		}
		out.Tokens = float64(*r.Tokens)
	case model.TBRetryAfter:
		if r.RetryAfterMs == nil {
			return out, missing("retry_after_ms")
		}
		out.RetryAfterMs = *r.RetryAfterMs
	}
	return out, nil
}

// epochIDs numbers the driver's opaque epochs in the order they are first
// seen, for the model (which wants integers). A reused epoch gets the same
// number again, which linearizability.CheckEpochs reports (C3).
type epochIDs struct {
	mu  sync.Mutex
	ids map[string]uint64
	raw []string // raw[n-1] is the value numbered n
}

func (e *epochIDs) id(raw json.RawMessage) uint64 {
	c, err := compactRaw(raw)
	if err != nil {
		c = string(raw)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ids == nil {
		e.ids = map[string]uint64{}
	}
	n, ok := e.ids[c]
	if !ok {
		n = uint64(len(e.ids) + 1)
		e.ids[c] = n
		e.raw = append(e.raw, c)
	}
	return n
}

// CrAnswer decodes a driver's credit-table answer into the model's output.
func crAnswer(in model.CrInput[string], r Response, ids *epochIDs) (model.CrOutput[string], error) {
	var out model.CrOutput[string]
	result := func() error {
		switch {
		case r.OK:
			out.Result = model.OK
		case r.Error == ErrExhausted && in.Kind == model.CrReserve:
			out.Result = model.Exhausted
		case r.Error == ErrLost && in.Kind == model.CrEnqueue:
			out.Result = model.Lost
		case r.Error == ErrNoTable:
			out.Result = model.NoTable
		default:
			return fmt.Errorf("error %q is not an answer of %s", r.Error, in.Kind)
		}
		return nil
	}
	freed := func() (int, error) {
		if !r.OK || r.Freed == nil {
			return 0, fmt.Errorf("answer of %s lacks field freed", in.Kind)
		}
		return *r.Freed, nil
	}
	switch in.Kind {
	case model.CrReserve:
		if err := result(); err != nil {
			return out, err
		}
		if r.OK {
			if r.Slot == nil || len(r.Epoch) == 0 {
				return out, errors.New("answer of reserve lacks slot or epoch")
			}
			out.Token = model.Token{Slot: *r.Slot, Epoch: ids.id(r.Epoch)}
		}
	case model.CrEnqueue:
		return out, result()
	case model.CrTake:
		if r.OK {
			if r.Payload == nil {
				return out, errors.New("answer of take lacks payload")
			}
			out.OK, out.Payload = true, *r.Payload
		} else if r.Error != ErrNone {
			return out, fmt.Errorf("error %q is not an answer of take", r.Error)
		}
	case model.CrFinish, model.CrRelease:
		n, err := freed()
		out.OK = n == 1
		return out, err
	case model.CrSweep:
		n, err := freed()
		out.Count, out.OK = n, true
		return out, err
	default:
		out.OK = r.OK
	}
	return out, nil
}

// concurrentShape is the size of one concurrent session.
type concurrentShape struct {
	clients, opsPerClient int
}

// runConcurrentTB records one token-bucket session and checks it.
func runConcurrentTB(conn *Conn, prefix string, seed uint64, shape concurrentShape, dir, name string) *CaseFailure {
	h := linearizability.TBHistory{Workload: fmt.Sprintf("conform %d clients x %d ops", shape.clients, shape.opsPerClient), Seed: seed}
	var mu sync.Mutex
	var st linearizability.Stamps
	var clock atomic.Int64
	clock.Store(1000)
	var fatal *CaseFailure
	keys := []string{"hot", ":_"}
	lims := map[string]model.Limits{"hot": {Capacity: 20, RefillPerSecond: 200}, ":_": {Capacity: 3, RefillPerSecond: 50}}
	var wg sync.WaitGroup
	for c := 0; c < shape.clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(c)))
			client := fmt.Sprintf("%s.c%d", prefix, c)
			for j := 0; j < shape.opsPerClient; j++ {
				key := keys[0]
				if r.IntN(4) == 0 {
					key = keys[1]
				}
				now := clock.Add(r.Int64N(3))
				if r.IntN(5) == 0 {
					now -= r.Int64N(20) // a stale reading (T4)
				}
				in := model.TBInput[string]{Kind: model.TBTake, Key: key, Limits: lims[key], Cost: 1, NowMs: now}
				switch x := r.IntN(20); {
				case x < 2:
					in.Kind = model.TBPeek
				case x < 4:
					in.Kind = model.TBRetryAfter
				case x < 5:
					in.Kind = model.TBReset
				}
				req := EncodeTB(in)
				req.Table, req.Client = prefix, client
				call := st.Stamp()
				ans, err := conn.Send(req)
				ret := st.Stamp()
				mu.Lock()
				if err != nil {
					if fatal == nil {
						fatal = &CaseFailure{Sent: []string{Line(withoutID(req))}}
						errors.As(err, &fatal.Driver)
					}
					mu.Unlock()
					return
				}
				out, derr := TBAnswer(in, ans.Resp)
				if derr != nil && fatal == nil {
					fatal = &CaseFailure{Sent: []string{Line(withoutID(req))}, Got: derr.Error(), GotLine: ans.Line}
				}
				h.Ops = append(h.Ops, linearizability.TBOp{Client: c, Input: in, Output: out, Call: call, Return: ret})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if fatal != nil {
		fatal.Case = name
		return fatal
	}
	rep, err := linearizability.CheckTokenBucket(h, linearizability.Options{Timeout: 20 * time.Second, Dir: dir, Name: name})
	return verdict(name, []string{"T11"}, rep, err, len(h.Ops))
}

func verdict(name string, covers []string, rep linearizability.Report, err error, ops int) *CaseFailure {
	if err != nil {
		return &CaseFailure{Case: name, Covers: covers, Got: err.Error()}
	}
	switch rep.Result {
	case linearizability.Ok:
		return nil
	case linearizability.Unknown:
		return &CaseFailure{Case: name, Covers: covers, Got: fmt.Sprintf("porcupine gave no verdict within its timeout on %d operations (Unknown is not a pass)", ops)}
	}
	return &CaseFailure{Case: name, Covers: covers, Got: fmt.Sprintf("%s (%d operations)", rep.Detail, ops),
		Artifact: rep.HTMLPath + " (history: " + rep.JSONPath + ")"}
}

// runConcurrentCr records one credit-table session: clients reserve, then
// enqueue, release, exit holding, or reuse a stale token; one owner client
// lists enqueued rows and takes and finishes each; it also sweeps.
func runConcurrentCr(conn *Conn, prefix string, seed uint64, shape concurrentShape, dir, name string) *CaseFailure {
	h := linearizability.CrHistory{Workload: fmt.Sprintf("conform %d clients x %d rounds", shape.clients, shape.opsPerClient), Seed: seed}
	var mu sync.Mutex
	var st linearizability.Stamps
	var fatal *CaseFailure
	ids := &epochIDs{}
	var nextHolder atomic.Uint64
	if _, err := conn.Send(Request{Op: OpNew, Table: prefix}); err != nil {
		f := &CaseFailure{Case: name, Sent: []string{Line(Request{Op: OpNew, Table: prefix})}}
		errors.As(err, &f.Driver)
		return f
	}
	// do sends one recorded operation for history client c.
	do := func(c int, client string, in model.CrInput[string], record bool) (model.CrOutput[string], Response, bool) {
		names := &concNames{ids: ids}
		req := EncodeCr(in, client, names)
		req.Table, req.Client = prefix, client
		call := st.Stamp()
		ans, err := conn.Send(req)
		ret := st.Stamp()
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if fatal == nil {
				fatal = &CaseFailure{Sent: []string{Line(withoutID(req))}}
				errors.As(err, &fatal.Driver)
			}
			return model.CrOutput[string]{}, Response{}, false
		}
		if !record {
			return model.CrOutput[string]{}, ans.Resp, fatal == nil
		}
		out, derr := crAnswer(in, ans.Resp, ids)
		if derr != nil {
			if fatal == nil {
				fatal = &CaseFailure{Sent: []string{Line(withoutID(req))}, Got: derr.Error(), GotLine: ans.Line}
			}
			return out, ans.Resp, false
		}
		h.Ops = append(h.Ops, linearizability.CrOp{Client: c, Input: in, Output: out, Call: call, Return: ret})
		return out, ans.Resp, fatal == nil
	}
	var holders sync.WaitGroup
	var done atomic.Bool
	for c := 0; c < shape.clients; c++ {
		holders.Add(1)
		go func() {
			defer holders.Done()
			r := rand.New(rand.NewPCG(seed, uint64(c)))
			gen := 0
			client := fmt.Sprintf("%s.c%d.%d", prefix, c, gen)
			holder := model.HolderID(nextHolder.Add(1))
			var prev model.Token
			for j := 0; j < shape.opsPerClient; j++ {
				class := model.General
				if r.IntN(2) == 0 {
					class = model.Internal
				}
				out, _, ok := do(c, client, model.CrInput[string]{Kind: model.CrReserve, Holder: holder, Class: class}, true)
				if !ok {
					return
				}
				if out.Result != model.OK {
					continue
				}
				tok := out.Token
				switch x := r.IntN(10); {
				case x < 5:
					_, _, ok = do(c, client, model.CrInput[string]{Kind: model.CrEnqueue, Holder: holder, Token: tok,
						Payload: fmt.Sprintf("%s#%d", client, j), NowMs: int64(j)}, true)
				case x < 7:
					_, _, ok = do(c, client, model.CrInput[string]{Kind: model.CrRelease, Holder: holder, Token: tok}, true)
				case x < 8 && prev.Epoch != 0: // a stale token (C3), then give the slot back
					if _, _, ok = do(c, client, model.CrInput[string]{Kind: model.CrEnqueue, Holder: holder, Token: prev, Payload: "stale", NowMs: int64(j)}, true); ok {
						_, _, ok = do(c, client, model.CrInput[string]{Kind: model.CrRelease, Holder: holder, Token: tok}, true)
					}
				default: // die holding the reservation; the goroutine lives on as a new client
					_, _, ok = do(c, client, model.CrInput[string]{Kind: model.CrExit, Holder: holder}, true)
					gen++
					client = fmt.Sprintf("%s.c%d.%d", prefix, c, gen)
					holder = model.HolderID(nextHolder.Add(1))
				}
				if !ok {
					return
				}
				prev = tok
			}
		}()
	}
	owner := shape.clients
	ownerClient := prefix + ".owner"
	var ownerWG sync.WaitGroup
	ownerWG.Add(1)
	go func() {
		defer ownerWG.Done()
		r := rand.New(rand.NewPCG(seed, 1<<32))
		for last := false; !last; {
			last = done.Load()
			_, resp, ok := do(owner, ownerClient, model.CrInput[string]{Kind: model.CrEnqueued}, false)
			if !ok {
				return
			}
			if resp.Entries != nil {
				for _, e := range *resp.Entries {
					tok := model.Token{Slot: e.Slot, Epoch: ids.id(e.Epoch)}
					if _, _, ok := do(owner, ownerClient, model.CrInput[string]{Kind: model.CrTake, Token: tok}, true); !ok {
						return
					}
					if _, _, ok := do(owner, ownerClient, model.CrInput[string]{Kind: model.CrFinish, Token: tok}, true); !ok {
						return
					}
				}
			}
			if r.IntN(3) == 0 || last {
				if _, _, ok := do(owner, ownerClient, model.CrInput[string]{Kind: model.CrSweep}, true); !ok {
					return
				}
			}
		}
	}()
	holders.Wait()
	done.Store(true)
	ownerWG.Wait()
	if fatal != nil {
		fatal.Case = name
		return fatal
	}
	rep, err := linearizability.CheckCredits(h, linearizability.Options{Timeout: 20 * time.Second, Dir: dir, Name: name})
	return verdict(name, []string{"C16", "C3"}, rep, err, len(h.Ops))
}

// concNames writes model epochs back as the driver's values.
type concNames struct{ ids *epochIDs }

func (n *concNames) Holder(string) (model.HolderID, error) { return 0, nil }
func (n *concNames) Epoch(json.RawMessage) (uint64, error) { return 0, nil }
func (n *concNames) RawEpoch(e uint64) json.RawMessage {
	n.ids.mu.Lock()
	defer n.ids.mu.Unlock()
	return json.RawMessage(n.ids.raw[e-1])
}
