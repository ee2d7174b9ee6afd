package conform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tollgate/tollgate/model"
)

// VectorFile is one file of golden vectors (spec/vectors/*.json).
type VectorFile struct {
	Protocol    int      `json:"protocol"`
	Primitive   string   `json:"primitive"`
	GeneratedBy string   `json:"generated_by,omitempty"`
	Cases       []Vector `json:"cases"`
}

// Vector is one named case: requests in protocol form (no id and no table;
// epochs as symbols "$eN", numbered in the order cr.reserve issues them)
// with the expected answers in canonical form (see Canonical).
type Vector struct {
	Name   string   `json:"name"`
	Covers []string `json:"covers"`
	Note   string   `json:"note,omitempty"`
	Steps  []Step   `json:"steps"`
}

// Step is one request and its expected answer.
type Step struct {
	Send   Request         `json:"send"`
	Expect json.RawMessage `json:"expect"`
}

// VectorFileNames are the committed vector files, by primitive.
var VectorFileNames = map[string]string{PrimTokenBucket: "tokenbucket.json", PrimCredits: "credits.json"}

// GenerateVectors computes every golden vector from the model: the scripts
// below fix the requests, model.TBTable.Step and model.Credits.Step decide
// every answer.
func GenerateVectors() ([]VectorFile, error) {
	var files []VectorFile
	for _, prim := range []string{PrimTokenBucket, PrimCredits} {
		f := VectorFile{Protocol: ProtocolVersion, Primitive: prim,
			GeneratedBy: "tollgate conform --write-vectors spec/vectors (from model/; do not edit by hand)"}
		for _, sc := range scripts(prim) {
			v, err := expectScript(prim, sc)
			if err != nil {
				return nil, fmt.Errorf("conform: vector %s: %w", sc.name, err)
			}
			f.Cases = append(f.Cases, v)
		}
		files = append(files, f)
	}
	return files, nil
}

// expectScript runs one script through the model.
func expectScript(prim string, sc script) (Vector, error) {
	v := Vector{Name: sc.name, Covers: sc.covers, Note: sc.note}
	var tb model.TBTable[string]
	var cr model.Credits[string]
	names := &SymbolicEpochs{}
	for _, req := range sc.steps {
		var resp Response
		switch {
		case prim == PrimTokenBucket && IsTB(req.Op):
			in, err := DecodeTB(&req)
			if err != nil {
				resp = Response{Error: ErrBadRequest}
				break
			}
			var out model.TBOutput
			tb, out = tb.Step(in)
			resp = TBResponse(in, out)
		case prim == PrimCredits && req.Op == OpNew:
			cr = model.Credits[string]{}
			resp = Response{OK: true}
		case prim == PrimCredits && IsCr(req.Op):
			in, err := DecodeCr(&req, names)
			if err != nil {
				resp = Response{Error: ErrBadRequest}
				break
			}
			var out model.CrOutput[string]
			cr, out = cr.Step(in)
			resp = CrResponse(in, out, names)
		default:
			resp = Response{Error: ErrBadRequest}
		}
		v.Steps = append(v.Steps, Step{Send: req, Expect: json.RawMessage(Canonical(req.Op, resp, nil, nil))})
	}
	return v, nil
}

// EncodeVectors renders a vector file as committed: stable byte for byte,
// one case per block and one step (request and expected answer) per line,
// so a port author can read a case and paste its requests into a driver.
func EncodeVectors(f VectorFile) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"protocol\": %d,\n  \"primitive\": %s,\n  \"generated_by\": %s,\n  \"cases\": [", f.Protocol, Line(f.Primitive), Line(f.GeneratedBy))
	for i, c := range f.Cases {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n    {\n      \"name\": %s,\n      \"covers\": %s,\n", Line(c.Name), Line(c.Covers))
		if c.Note != "" {
			fmt.Fprintf(&b, "      \"note\": %s,\n", Line(c.Note))
		}
		b.WriteString("      \"steps\": [")
		for j, s := range c.Steps {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "\n        {\"send\": %s, \"expect\": %s}", Line(s.Send), Line(s.Expect))
		}
		b.WriteString("\n      ]\n    }")
	}
	b.WriteString("\n  ]\n}\n")
	return b.Bytes()
}

// WriteVectors regenerates the committed vectors into dir and returns the
// paths written.
func WriteVectors(dir string) ([]string, error) {
	files, err := GenerateVectors()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("conform: %w", err)
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, VectorFileNames[f.Primitive])
		if err := os.WriteFile(p, EncodeVectors(f), 0o644); err != nil {
			return nil, fmt.Errorf("conform: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// LoadVectors reads vector files. A file's primitive must be "tb" or "cr"
// and every step must name an operation of that primitive or be a request
// the protocol refuses.
func LoadVectors(paths ...string) ([]VectorFile, error) {
	var out []VectorFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("conform: vectors: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var f VectorFile
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("conform: vectors %s: %w", p, err)
		}
		if f.Primitive != PrimTokenBucket && f.Primitive != PrimCredits {
			return nil, fmt.Errorf("conform: vectors %s: field primitive must be %q or %q, not %q", p, PrimTokenBucket, PrimCredits, f.Primitive)
		}
		if f.Protocol != ProtocolVersion {
			return nil, fmt.Errorf("conform: vectors %s: field protocol is %d; this harness speaks %d", p, f.Protocol, ProtocolVersion)
		}
		for i, c := range f.Cases {
			if c.Name == "" {
				return nil, fmt.Errorf("conform: vectors %s: case %d: field name is required", p, i)
			}
			for j, s := range c.Steps {
				var r Response
				if err := json.Unmarshal(s.Expect, &r); err != nil {
					return nil, fmt.Errorf("conform: vectors %s: case %s step %d: field expect: %w", p, c.Name, j+1, err)
				}
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// CaseFailure is a case whose answers differ from the expected ones: the
// requests sent up to and including the first mismatch, in protocol form.
type CaseFailure struct {
	Case     string
	Covers   []string
	Seed     uint64 // random sessions only
	Sent     []string
	Want     string
	Got      string // canonical form
	GotLine  string // the driver's line as written
	Driver   *DriverError
	Shrunk   string // how the case was minimized, if it was
	Artifact string // a file written for this failure (porcupine visualization)
	// Part is, for a concurrent session that failed, its smallest part
	// that fails on its own, one operation a line in protocol form
	// (failure.go); PartOf says what part it is.
	Part   []string
	PartOf string
	// Breaks names the invariant the first differing answer breaks, for a
	// vector or a random session (concurrent sessions name theirs in
	// Covers: T11, C16, C3).
	Breaks Divergence
	// Unknown: the case stopped at an answer "unknown" (the driver's server
	// gave no answer in time, spec/protocol.md §5). Nothing after it can be
	// judged, and it is not a failure.
	Unknown bool
}

// caseRun sends the requests of one case (a vector or a random session) on
// a connection, one at a time, and keeps what a failure reports. Requests
// are given in symbolic form: table and client names as the case spells
// them, made unique on the driver by prefix, and epochs as "$eN", bound to
// the driver's values as it answers.
type caseRun struct {
	conn   *Conn
	prefix string
	binder *Epochs
	sent   []Request // in symbolic form, for the classification
	fail   *CaseFailure
}

func newCaseRun(conn *Conn, prefix string, fail *CaseFailure) *caseRun {
	return &caseRun{conn: conn, prefix: prefix, binder: NewEpochs(), fail: fail}
}

// step sends sym and compares the answer with want in canonical form. At the
// first mismatch or driver error it fills in the failure (with the invariant
// the answer breaks) and reports false.
func (c *caseRun) step(sym Request, want Response) bool {
	c.sent = append(c.sent, sym)
	req, show := sym, sym
	if IsTB(req.Op) || IsCr(req.Op) {
		req.Table, show.Table = c.prefix, "t"
	}
	if req.Client != "" {
		req.Client = c.prefix + "." + req.Client
	}
	if len(req.Epoch) > 0 {
		req.Epoch = c.binder.Raw(req.Epoch)
	}
	c.fail.Sent = append(c.fail.Sent, Line(show))
	wantC := Canonical(req.Op, want, nil, nil)
	ans, err := c.conn.Send(req)
	if err != nil {
		errors.As(err, &c.fail.Driver)
		c.fail.Want = wantC
		return false
	}
	if ans.Resp.Error == ErrUnknownOutcome {
		c.fail.Unknown, c.fail.Got, c.fail.GotLine = true, "unknown outcome", ans.Line
		return false
	}
	if got := Canonical(req.Op, ans.Resp, &want, c.binder); got != wantC {
		c.fail.Want, c.fail.Got, c.fail.GotLine = wantC, got, ans.Line
		c.fail.Breaks = diverge(c.sent, ans.Resp, c.binder)
		return false
	}
	return true
}

// runVector sends one case on conn, with table and client names made unique
// by prefix, and reports the first mismatch.
func runVector(conn *Conn, prefix string, v Vector) *CaseFailure {
	run := newCaseRun(conn, prefix, &CaseFailure{Case: v.Name, Covers: v.Covers})
	for _, s := range v.Steps {
		var want Response
		_ = json.Unmarshal(s.Expect, &want)
		if !run.step(s.Send, want) {
			return run.fail
		}
	}
	return nil
}

func withoutID(r Request) Request { r.ID = 0; return r }
