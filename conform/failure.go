package conform

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// A failed concurrent session in the driver's own terms (spec/PORTING.md):
// porcupine's history holds the model's inputs and outputs, which a port's
// author never sees, so the harness writes the session again in protocol
// form, every request as it was written and every answer as the model's
// reading of what was read, and prints the smallest part of it that still
// fails: for the token bucket, the operations of one key (with the
// operations on every key); for the credit table, one table, so the whole
// session.

// A ProtocolOp is one operation of a concurrent session: the driver client
// that sent it, its call and return on the history's clock, the request
// and the answer, in protocol form. An operation whose outcome is unknown
// (the driver answered "unknown") has no answer.
type ProtocolOp struct {
	Client string          `json:"client"`
	Call   int64           `json:"call"`
	Return int64           `json:"return"`
	Send   json.RawMessage `json:"send"`
	Answer json.RawMessage `json:"answer,omitempty"`
}

// A ProtocolHistory is a failed concurrent session as the harness writes
// it next to porcupine's files (NAME.protocol.json): the whole session, and
// Part, its smallest part that still fails, with PartOf saying what it is.
type ProtocolHistory struct {
	Primitive string       `json:"primitive"`
	Workload  string       `json:"workload"`
	Seed      uint64       `json:"seed"`
	Breaks    string       `json:"breaks"`
	PartOf    string       `json:"part_of"`
	Part      []ProtocolOp `json:"part"`
	Ops       []ProtocolOp `json:"ops"`
}

// partTimeout is porcupine's budget for each part checked on its own.
const partTimeout = 5 * time.Second

// maxPrinted is the most operations a failure prints; a longer part is in
// the file only.
const maxPrinted = 40

// tbProtocol is op of a token-bucket session over prefix in protocol form.
func tbProtocol(prefix string, op linearizability.TBOp) ProtocolOp {
	req := EncodeTB(op.Input)
	req.Table, req.Client = prefix, fmt.Sprintf("%s.c%d", prefix, op.Client)
	p := ProtocolOp{Client: req.Client, Call: op.Call, Return: op.Return, Send: rawJSON(req)}
	if !op.Unknown {
		p.Answer = answerJSON(TBResponse(op.Input, op.Output))
	}
	return p
}

// answerJSON is an answer in protocol form without its id: the history
// pairs it with its request, so the id the driver echoed says nothing.
func answerJSON(r Response) json.RawMessage {
	return json.RawMessage("{" + strings.TrimPrefix(Line(r), `{"id":0,`))
}

// tbPart is the smallest part of h that fails on its own: the operations of
// one key, with those of every key (reset_all, reclaim), the key with the
// fewest first; the whole history when no one key fails alone.
func tbPart(h linearizability.TBHistory) (part []linearizability.TBOp, of string) {
	byKey := map[string][]linearizability.TBOp{}
	var every []linearizability.TBOp
	for _, op := range h.Ops {
		switch op.Input.Kind {
		case model.TBResetAll, model.TBReclaim:
			every = append(every, op)
		default:
			byKey[op.Input.Key] = append(byKey[op.Input.Key], op)
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(byKey[keys[i]]) != len(byKey[keys[j]]) {
			return len(byKey[keys[i]]) < len(byKey[keys[j]])
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		sub := h
		sub.Ops = append(append([]linearizability.TBOp(nil), byKey[k]...), every...)
		sort.Slice(sub.Ops, func(i, j int) bool { return sub.Ops[i].Call < sub.Ops[j].Call })
		if rep, err := linearizability.CheckTokenBucket(sub, linearizability.Options{Timeout: partTimeout}); err == nil && rep.Result == linearizability.Illegal {
			return sub.Ops, fmt.Sprintf("key %q: %d of %d operations", k, len(sub.Ops), len(h.Ops))
		}
	}
	return h.Ops, fmt.Sprintf("the whole session (%d operations; no one key fails alone)", len(h.Ops))
}

// protocolFailure writes hist next to porcupine's files of name in dir and
// adds to f the part's lines and the file's path.
func protocolFailure(f *CaseFailure, dir, name string, hist ProtocolHistory) {
	for _, op := range hist.Part {
		answer := "(outcome unknown)"
		if op.Answer != nil {
			answer = string(op.Answer)
		}
		f.Part = append(f.Part, fmt.Sprintf("[%d–%d] %s → %s", op.Call, op.Return, op.Send, answer))
	}
	f.PartOf = hist.PartOf
	if len(f.Part) > maxPrinted {
		f.Part = append(f.Part[:maxPrinted], fmt.Sprintf("… %d more in the file", len(hist.Part)-maxPrinted))
	}
	data, err := json.MarshalIndent(hist, "", " ")
	if err == nil && dir != "" {
		path := filepath.Join(dir, name+".protocol.json")
		if err = os.WriteFile(path, append(data, '\n'), 0o644); err == nil {
			f.Artifact += "; in protocol form: " + path
		}
	}
	if err != nil {
		f.Artifact += "; the protocol form could not be written: " + err.Error()
	}
}

// tbFailure completes the failure of an Illegal token-bucket session.
func tbFailure(f *CaseFailure, dir, name, prefix string, h linearizability.TBHistory) {
	part, of := tbPart(h)
	hist := ProtocolHistory{Primitive: "tb", Workload: h.Workload, Seed: h.Seed, Breaks: f.Breaks.Invariant, PartOf: of}
	for _, op := range h.Ops {
		hist.Ops = append(hist.Ops, tbProtocol(prefix, op))
	}
	for _, op := range part {
		hist.Part = append(hist.Part, tbProtocol(prefix, op))
	}
	protocolFailure(f, dir, name, hist)
}

// crFailure completes the failure of an Illegal credit-table session: one
// table, so its part is the whole session.
func crFailure(f *CaseFailure, dir, name string, b *crPipe, h linearizability.CrHistory) {
	hist := ProtocolHistory{Primitive: "cr", Workload: h.Workload, Seed: h.Seed, Breaks: f.Breaks.Invariant,
		PartOf: fmt.Sprintf("the whole session (%d operations on one table)", len(h.Ops))}
	for _, op := range h.Ops {
		client := b.clientOf(op.Client, op.Input)
		req := EncodeCr(op.Input, client, b.epochs)
		req.Table, req.Client = b.prefix, client
		p := ProtocolOp{Client: client, Call: op.Call, Return: op.Return, Send: rawJSON(req)}
		if !op.Unknown {
			p.Answer = answerJSON(CrResponse(op.Input, op.Output, b.epochs))
		}
		hist.Ops = append(hist.Ops, p)
	}
	hist.Part = hist.Ops
	protocolFailure(f, dir, name, hist)
}

// partHeading is how a failure introduces its part.
func partHeading(of string) string {
	return "smallest failing part, " + of + ", as [call–return] request → answer:"
}
