package conform

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/sut"
	"github.com/tollgate/tollgate/model"
)

// DriverName is what the Go driver answers to hello.
const DriverName = "tollgate-go"

// ServeGo runs the Go driver (spec/protocol.md): it reads requests from in
// until end of input and answers on out, applying each request to the
// implementations in impl/ through internal/sut. Tables of f's primitive
// are built from f's mutant package (fault.None: the real implementation),
// the other primitive's are real. Each client is its own goroutine;
// requests without a client run on the reading goroutine. Logs go to logw.
// ServeGo returns when in ends and every answer is written.
func ServeGo(in io.Reader, out io.Writer, logw io.Writer, f fault.Fault) error {
	return Serve(in, out, logw, InProcess(f))
}

// Tables makes the tables a Go driver serves: one per protocol table name,
// made on first use (a token bucket) or by cr.new (a credit table).
type Tables interface {
	TB(name string) (TBTable, error)
	Cr(name string) (CrTable, error)
}

// TBTable is one token-bucket table of a driver. A table in process never
// returns an error; one on a server (backends/redissut's DriverTables)
// returns one made by OutcomeUnknown when the call's outcome is unknown
// (the driver answers "unknown"), and a server's refusal as it is
// (bad_request naming it: nothing ran).
type TBTable interface {
	Apply(in model.TBInput[string]) (model.TBOutput, error)
}

// CrTable is one credit table of a driver, as TBTable. Its epochs are the
// table's own, as it issued them: the harness names a driver's epochs
// (Epochs), so the driver renames none.
type CrTable interface {
	Apply(in model.CrInput[string]) (model.CrOutput[string], error)
}

// InProcess is the tables of impl/ in this process, through internal/sut
// (the credit tables with their epochs as issued:
// sut.NewCreditsAsIssued); f's primitive's tables are f's mutant
// package's.
func InProcess(f fault.Fault) Tables { return inProcess{f} }

type inProcess struct{ faults fault.Fault }

// fault is the mutant the tables of one primitive carry: the driver's
// fault if it is one of that primitive's, else none (a driver built with a
// credit-table mutant serves real token buckets).
func (p inProcess) fault(credits bool) fault.Fault {
	if p.faults != fault.None && p.faults.Credits() == credits {
		return p.faults
	}
	return fault.None
}

func (p inProcess) TB(string) (TBTable, error) {
	return localTB{sut.NewTokenBucket[string](p.fault(false))}, nil
}

func (p inProcess) Cr(string) (CrTable, error) {
	return localCr{sut.NewCreditsAsIssued[string](p.fault(true))}, nil
}

type localTB struct{ t *sut.TokenBucket[string] }

func (l localTB) Apply(in model.TBInput[string]) (model.TBOutput, error) { return l.t.Apply(in), nil }

type localCr struct{ t *sut.Credits[string] }

func (l localCr) Apply(in model.CrInput[string]) (model.CrOutput[string], error) {
	return l.t.Apply(in), nil
}

// Serve runs the Go driver over tables: as ServeGo, with the tables tables
// makes. A call a table reports an OutcomeUnknown error for is answered
// {"ok":false,"error":"unknown"} (spec/protocol.md §5), one it reports
// another error for bad_request.
func Serve(in io.Reader, out io.Writer, logw io.Writer, tables Tables) error {
	d := &goDriver{
		out:     bufio.NewWriter(out),
		tables:  tables,
		tb:      map[string]TBTable{},
		cr:      map[string]CrTable{},
		clients: map[string]*goClient{},
		holders: map[string]model.HolderID{},
		logw:    logw,
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var req Request
		if err := json.Unmarshal(line, &req); err != nil {
			var probe struct {
				ID int64 `json:"id"`
			}
			_ = json.Unmarshal(line, &probe)
			d.reply(probe.ID, Response{Error: ErrBadRequest, Message: fmt.Sprintf("malformed request: %v", err)})
			continue
		}
		d.dispatch(req)
	}
	d.mu.Lock()
	for _, c := range d.clients {
		close(c.inbox)
	}
	d.mu.Unlock()
	d.wg.Wait()
	d.outMu.Lock()
	defer d.outMu.Unlock()
	if err := d.out.Flush(); err != nil {
		return fmt.Errorf("conform: driver output: %w", err)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("conform: driver input: %w", err)
	}
	return nil
}

type goClient struct {
	inbox chan Request
	dead  bool
}

type goDriver struct {
	outMu sync.Mutex
	out   *bufio.Writer

	mu      sync.Mutex
	tables  Tables
	tb      map[string]TBTable
	cr      map[string]CrTable
	clients map[string]*goClient
	holders map[string]model.HolderID
	wg      sync.WaitGroup
	logw    io.Writer
}

// OutcomeUnknown wraps err, a table's error, to say that the call's
// outcome is unknown: it was sent and got no answer, or could not be sent
// at all; the driver answers "unknown" (spec/protocol.md §5). Its message
// is err's.
func OutcomeUnknown(err error) error { return outcomeUnknown{err} }

type outcomeUnknown struct{ error }

func (e outcomeUnknown) Unwrap() error { return e.error }

// unknown answers a call whose table reported an error: "unknown" when
// its outcome is unknown (OutcomeUnknown), bad_request naming the error
// when the server refused it (nothing ran).
func (d *goDriver) unknown(req Request, err error) Response {
	fmt.Fprintf(d.logw, "tollgate driver: %s %s: %v\n", req.Op, req.Table, err)
	if !errors.As(err, new(outcomeUnknown)) {
		return Response{Error: ErrBadRequest, Message: "the backend refused the call: " + err.Error()}
	}
	return Response{Error: ErrUnknownOutcome, Message: err.Error()}
}

func (d *goDriver) reply(id int64, r Response) {
	r.ID = id
	line := Line(r)
	d.outMu.Lock()
	defer d.outMu.Unlock()
	d.out.WriteString(line)
	d.out.WriteByte('\n')
	d.out.Flush()
}

// dispatch hands a request to its client's goroutine, or runs it here.
func (d *goDriver) dispatch(req Request) {
	if req.Client == "" {
		d.reply(req.ID, d.handle(req))
		return
	}
	d.mu.Lock()
	c, ok := d.clients[req.Client]
	if !ok {
		c = &goClient{inbox: make(chan Request, 16)}
		d.clients[req.Client] = c
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			for r := range c.inbox {
				d.reply(r.ID, d.handle(r))
			}
		}()
	}
	dead := c.dead
	d.mu.Unlock()
	if dead && req.Op == OpExit {
		d.reply(req.ID, Response{OK: true}) // exiting twice is harmless
		return
	}
	if dead {
		d.reply(req.ID, Response{Error: ErrBadRequest, Message: fmt.Sprintf("client %q has exited (cr.exit) and issues nothing more", req.Client)})
		return
	}
	c.inbox <- req
}

func (d *goDriver) handle(req Request) Response {
	switch {
	case req.Op == OpHello:
		return Response{OK: true, Protocol: ProtocolVersion, Primitives: []string{PrimTokenBucket, PrimCredits}, Ops: []string{OpAdmit}, Name: DriverName}
	case IsTB(req.Op):
		return d.handleTB(req)
	case IsCr(req.Op):
		return d.handleCr(req)
	}
	return Response{Error: ErrBadRequest, Message: fmt.Sprintf("unknown operation %q", req.Op)}
}

func bad(err error) Response {
	var b *BadRequest
	if errors.As(err, &b) {
		return Response{Error: ErrBadRequest, Message: b.Msg}
	}
	return Response{Error: ErrBadRequest, Message: err.Error()}
}

func (d *goDriver) handleTB(req Request) Response {
	if req.Table == "" {
		return Response{Error: ErrBadRequest, Message: req.Op + ": field table is required (a non-empty string)"}
	}
	in, err := DecodeTB(&req)
	if err != nil {
		return bad(err)
	}
	d.mu.Lock()
	t, ok := d.tb[req.Table]
	if !ok {
		var err error
		if t, err = d.tables.TB(req.Table); err != nil {
			d.mu.Unlock()
			return d.unknown(req, err)
		}
		d.tb[req.Table] = t
	}
	d.mu.Unlock()
	out, err := t.Apply(in)
	if err != nil {
		return d.unknown(req, err)
	}
	r := TBResponse(in, out)
	if r.Error == ErrInvalidArgument {
		r.Message = InvalidMessage(in)
	}
	return r
}

// driverNames resolves client names to holders, and epochs to the
// integers the tables issued and back: the Go driver's epochs are its
// tables' own, written as JSON integers.
type driverNames struct {
	d *goDriver
}

// Epoch implements CrNames: an integer the driver answered.
func (driverNames) Epoch(raw json.RawMessage) (uint64, error) {
	n, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil || n > math.MaxInt64 {
		return 0, badf("epoch %s was never issued by this driver (epochs are positive integers)", raw)
	}
	return n, nil // 0 is the epoch-0 defect, refused by DecodeCr (C12)
}

// RawEpoch implements CrNames.
func (driverNames) RawEpoch(e uint64) json.RawMessage {
	return json.RawMessage(strconv.FormatUint(e, 10))
}

func (n driverNames) Holder(client string) (model.HolderID, error) {
	n.d.mu.Lock()
	defer n.d.mu.Unlock()
	h, ok := n.d.holders[client]
	if !ok {
		h = model.HolderID(len(n.d.holders) + 1)
		n.d.holders[client] = h
	}
	return h, nil
}

func (d *goDriver) handleCr(req Request) Response {
	if req.Table == "" {
		return Response{Error: ErrBadRequest, Message: req.Op + ": field table is required (a non-empty string)"}
	}
	names := driverNames{d: d}
	d.mu.Lock()
	t, ok := d.cr[req.Table]
	if req.Op == OpNew {
		defer d.mu.Unlock()
		if ok {
			return Response{Error: ErrBadRequest, Message: fmt.Sprintf("cr.new: table %q already exists (names are used once per driver)", req.Table)}
		}
		t, err := d.tables.Cr(req.Table)
		if err != nil {
			return d.unknown(req, err)
		}
		d.cr[req.Table] = t
		return Response{OK: true}
	}
	d.mu.Unlock()
	if !ok {
		return Response{Error: ErrBadRequest, Message: fmt.Sprintf("%s: no table %q (create it with cr.new)", req.Op, req.Table)}
	}
	in, err := DecodeCr(&req, names)
	if err != nil {
		return bad(err)
	}
	if in.Kind == model.CrExit {
		// The client dies: its holder is dead in every table (a process
		// that exits is gone everywhere), and it issues nothing more.
		d.mu.Lock()
		if c := d.clients[req.Client]; c != nil {
			c.dead = true
		}
		tables := make([]CrTable, 0, len(d.cr))
		for _, t := range d.cr {
			tables = append(tables, t)
		}
		d.mu.Unlock()
		for _, t := range tables {
			if _, err := t.Apply(in); err != nil {
				return d.unknown(req, err)
			}
		}
		return Response{OK: true}
	}
	out, err := t.Apply(in)
	if err != nil {
		return d.unknown(req, err)
	}
	return CrResponse(in, out, names)
}
