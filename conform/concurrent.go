package conform

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// Concurrent sessions (suite "concurrent") run the workloads of package
// linearizability, through its one recorder, against the driver: this file
// holds only what is specific to a pipe. tbPipe and crPipe are
// linearizability backends that encode each call as a request, send it on
// the connection and decode the answer into the model's output; the
// recorder stamps each call before the request is written and after its
// answer is read, so the interval contains the moment the driver performed
// it. The histories are checked by the porcupine models of package
// linearizability (T11, C16). Nothing about the primitives is decided here.
//
// The protocol runs each client's requests in order, one at a time
// (spec/protocol.md §2), and a client that exited issues nothing more. So a
// holder's calls are serialized here (a workload's "second thread of the
// holder" waits its turn instead of overlapping), and a call of an exited
// holder is not sent (linearizability.ErrNotRun): it could not have been
// made. Everything else overlaps as the workload makes it.

// TBAnswer decodes a driver's token-bucket answer into the model's output.
func TBAnswer(in model.TBInput[string], r Response) (model.TBOutput, error) {
	if r.Error == ErrInvalidArgument {
		return model.TBOutput{Invalid: r.Field}, nil
	}
	if r.Error != "" && !(r.Error == ErrRateLimited && (in.Kind == model.TBTake || in.Kind == model.TBAdmit)) {
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
	case model.TBAdmit:
		switch {
		case r.OK && r.Remaining == nil:
			return out, missing("remaining")
		case r.OK:
			out.Remaining = float64(*r.Remaining)
		case r.RetryAfterMs == nil:
			return out, missing("retry_after_ms")
		default:
			out.RetryAfterMs = *r.RetryAfterMs
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
	case model.TBReclaim:
		if r.Reclaimed == nil {
			return out, missing("reclaimed")
		}
		out.Reclaimed = *r.Reclaimed
	}
	return out, nil
}

// concurrentShape is the size of one concurrent session.
type concurrentShape struct {
	clients, opsPerClient int
}

// pipeFailure is the error a pipe backend returns when the driver broke: a
// transport error or an answer that is not one of the operation's.
type pipeFailure struct{ f *CaseFailure }

func (e *pipeFailure) Error() string {
	if e.f.Driver != nil {
		return e.f.Driver.Error()
	}
	return e.f.Got
}

// send sends req and returns its answer, or the failure that stops the
// session.
func send(conn *Conn, req Request) (Answer, error) {
	ans, err := conn.Send(req)
	if err != nil {
		f := &CaseFailure{Sent: []string{Line(withoutID(req))}}
		errors.As(err, &f.Driver)
		if f.Driver == nil {
			f.Got = err.Error()
		}
		return ans, &pipeFailure{f}
	}
	return ans, nil
}

func undecodable(req Request, ans Answer, err error) error {
	return &pipeFailure{&CaseFailure{Sent: []string{Line(withoutID(req))}, Got: err.Error(), GotLine: ans.Line}}
}

// tbPipe is a token-bucket backend over a driver connection: history client
// c is the driver's client "<prefix>.c<c>".
type tbPipe struct {
	conn   *Conn
	prefix string
}

func (p *tbPipe) Do(client int, in model.TBInput[string]) (model.TBOutput, error) {
	req := EncodeTB(in)
	req.Table, req.Client = p.prefix, fmt.Sprintf("%s.c%d", p.prefix, client)
	ans, err := send(p.conn, req)
	if err != nil {
		return model.TBOutput{}, err
	}
	if ans.Resp.Error == ErrUnknownOutcome {
		return model.TBOutput{}, fmt.Errorf("%w: the driver answered %s", linearizability.ErrUnknown, ans.Line)
	}
	out, err := TBAnswer(in, ans.Resp)
	if err != nil {
		return out, undecodable(req, ans, err)
	}
	return out, nil
}

// crPipe is a credit-table backend over a driver connection. A holder is
// the driver's client "<prefix>.h<holder>" (spec/protocol.md §2: a client
// is the holder); calls that name no holder go out as client
// "<prefix>.w<c>" for history client c.
type crPipe struct {
	conn   *Conn
	prefix string
	epochs *Epochs // the driver's epochs as the model's numbers

	mu      sync.Mutex
	holders map[model.HolderID]*pipeHolder
}

type pipeHolder struct {
	mu   sync.Mutex // one request of this client outstanding at a time
	dead bool
}

func (p *crPipe) holder(h model.HolderID) *pipeHolder {
	p.mu.Lock()
	defer p.mu.Unlock()
	ph := p.holders[h]
	if ph == nil {
		ph = &pipeHolder{}
		p.holders[h] = ph
	}
	return ph
}

// byHolder reports whether in is sent as its holder's client rather than
// as the history client's.
func byHolder(in model.CrInput[string]) bool {
	switch in.Kind {
	case model.CrReserve, model.CrEnqueue, model.CrRelease, model.CrExit:
		return true
	}
	return false
}

// clientOf is the driver client that sends in for history client client:
// "<prefix>.h<holder>" for a holder's call, "<prefix>.w<client>" otherwise.
func (p *crPipe) clientOf(client int, in model.CrInput[string]) string {
	if byHolder(in) {
		return fmt.Sprintf("%s.h%d", p.prefix, in.Holder)
	}
	return fmt.Sprintf("%s.w%d", p.prefix, client)
}

func (p *crPipe) Do(client int, in model.CrInput[string]) (model.CrOutput[string], error) {
	var zero model.CrOutput[string]
	name := p.clientOf(client, in)
	if byHolder(in) {
		ph := p.holder(in.Holder)
		ph.mu.Lock()
		defer ph.mu.Unlock()
		if ph.dead {
			return zero, linearizability.ErrNotRun
		}
		if in.Kind == model.CrExit {
			ph.dead = true
		}
	}
	req := EncodeCr(in, name, p.epochs)
	req.Table, req.Client = p.prefix, name
	ans, err := send(p.conn, req)
	if err != nil {
		return zero, err
	}
	if ans.Resp.Error == ErrUnknownOutcome {
		return zero, fmt.Errorf("%w: the driver answered %s", linearizability.ErrUnknown, ans.Line)
	}
	out, err := CrAnswer(in, ans.Resp, p.epochs.number)
	if err != nil {
		return out, undecodable(req, ans, err)
	}
	return out, nil
}

// sessionFailure names the failure of one concurrent session: the driver broke
// (pipeFailure), or the recording could not run.
func sessionFailure(name string, covers []string, err error) *CaseFailure {
	var pf *pipeFailure
	if errors.As(err, &pf) {
		pf.f.Case, pf.f.Covers = name, covers
		return pf.f
	}
	return &CaseFailure{Case: name, Covers: covers, Got: err.Error()}
}

// checkTimeout is porcupine's budget for one concurrent session.
const checkTimeout = 20 * time.Second

// runConcurrentTB records one token-bucket session, the workload chosen by
// seed from linearizability.TBWorkloads and scaled to shape, and checks it.
// noReclaim drops tb.reclaim from the mix (a protocol 1 driver); admit
// keeps tb.admit in it (a driver whose hello lists it in ops).
func runConcurrentTB(conn *Conn, prefix string, seed uint64, shape concurrentShape, dir, name string, noReclaim, admit bool) *CaseFailure {
	covers := []string{"T11"}
	ws := linearizability.TBWorkloads()
	w := ws[seed%uint64(len(ws))].Scaled(shape.clients, 0, shape.opsPerClient)
	// The weights are take, peek, retry_after, reset, reset_all, reclaim,
	// admit.
	if noReclaim {
		w.Mix[5] = 0
	}
	if !admit {
		w.Mix[6] = 0
	}
	if w.Mix == [7]int{} {
		w.Mix[0] = 1
	}
	h, err := linearizability.RecordTokenBucket(w, &tbPipe{conn: conn, prefix: prefix}, seed)
	if err != nil {
		return sessionFailure(name, covers, err)
	}
	h.Workload = fmt.Sprintf("conform %s: %d clients x %d ops", w.Name, w.Clients, w.OpsPerClient)
	rep, err := linearizability.CheckTokenBucket(h, linearizability.Options{Timeout: checkTimeout, Dir: dir, Name: name})
	f := verdict(name, covers, rep, err, len(h.Ops))
	if f != nil && err == nil && rep.Result == linearizability.Illegal {
		tbFailure(f, dir, name, prefix, h)
	}
	return f
}

// runConcurrentCr records one credit-table session, the workload chosen by
// seed from linearizability.CrWorkloads and scaled to shape, on a new table
// of the driver, and checks it.
func runConcurrentCr(conn *Conn, prefix string, seed uint64, shape concurrentShape, dir, name string) *CaseFailure {
	covers := []string{"C16", "C3", "C17"}
	if _, err := send(conn, Request{Op: OpNew, Table: prefix}); err != nil {
		return sessionFailure(name, covers, err)
	}
	ws := linearizability.CrWorkloads()
	w := ws[seed%uint64(len(ws))].Scaled(shape.clients, shape.opsPerClient)
	b := &crPipe{conn: conn, prefix: prefix, epochs: NewEpochs(), holders: map[model.HolderID]*pipeHolder{}}
	h, err := linearizability.RecordCredits(w, b, seed)
	if err != nil {
		return sessionFailure(name, covers, err)
	}
	h.Workload = fmt.Sprintf("conform %s: %d holders x %d rounds", w.Name, w.Holders, w.Rounds)
	rep, err := linearizability.CheckCredits(h, linearizability.Options{Timeout: checkTimeout, Dir: dir, Name: name})
	f := verdict(name, covers, rep, err, len(h.Ops))
	if f != nil && err == nil && rep.Result == linearizability.Illegal {
		crFailure(f, dir, name, b, h)
	}
	return f
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
	return &CaseFailure{Case: name, Covers: covers, Got: fmt.Sprintf("a history of %d operations, %d of them overlapping another", ops, rep.Overlapping),
		Artifact: rep.HTMLPath + " (history: " + rep.JSONPath + ")", Breaks: Divergence{Invariant: rep.Invariant, Detail: rep.Detail}}
}
