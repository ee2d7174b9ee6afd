package conform

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

const vectorDir = "../spec/vectors"

// TestVectorsMatchModel fails when the committed golden vectors drift from
// what the model answers today. Regenerate with
// go run ./cmd/tollgate conform --write-vectors spec/vectors
func TestVectorsMatchModel(t *testing.T) {
	files, err := GenerateVectors()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		path := filepath.Join(vectorDir, VectorFileNames[f.Primitive])
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (generate with: go run ./cmd/tollgate conform --write-vectors spec/vectors)", err)
		}
		if want := EncodeVectors(f); !bytes.Equal(got, want) {
			t.Errorf("%s drifted from the model; regenerate with: go run ./cmd/tollgate conform --write-vectors spec/vectors", path)
		}
	}
}

// notInVectors are the invariant IDs a sequential vector cannot show, and the
// suite or layer that checks each instead.
var notInVectors = map[string]string{
	"T11": "concurrency: the concurrent suite (porcupine, linearizability.CheckTokenBucket)",
	"C16": "concurrency: the concurrent suite (porcupine, linearizability.CheckCredits)",
	"C15": "the owner protocol of impl/credits.Owner is in-process Go, not part of the driver protocol",
}

// TestVectorsCoverEveryInvariant: every invariant ID of the spec is covered
// by a named vector, or listed in notInVectors with the check that covers it.
func TestVectorsCoverEveryInvariant(t *testing.T) {
	files, err := GenerateVectors()
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, f := range files {
		for _, c := range f.Cases {
			for _, id := range c.Covers {
				covered[id] = true
			}
		}
	}
	re := regexp.MustCompile(`\*\*([CT][0-9]+)\*\*`)
	for _, spec := range []string{"../spec/tokenbucket.md", "../spec/credits.md"} {
		b, err := os.ReadFile(spec)
		if err != nil {
			t.Fatal(err)
		}
		ids := re.FindAllStringSubmatch(string(b), -1)
		if len(ids) < 10 {
			t.Fatalf("%s: found only %d invariant IDs", spec, len(ids))
		}
		for _, m := range ids {
			id := m[1]
			if !covered[id] && notInVectors[id] == "" {
				t.Errorf("%s (%s) is covered by no vector", id, spec)
			}
			if covered[id] && notInVectors[id] != "" {
				t.Errorf("%s is covered by a vector but listed in notInVectors", id)
			}
		}
	}
}

// TestExtraVectorFile: a vector file given with --vectors runs with the
// committed ones, and a case whose expectation the driver does not meet is
// reported by name with the request and both answers.
func TestExtraVectorFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mine.json")
	err := os.WriteFile(path, []byte(`{"protocol":2,"primitive":"tb","cases":[
	  {"name":"mine/peek-unseen-is-capacity","covers":["T6"],"steps":[
	    {"send":{"op":"tb.peek","key":"x","capacity":4,"refill_per_second":1,"now_ms":0},"expect":{"ok":true,"tokens":4}}]},
	  {"name":"mine/wrong-on-purpose","covers":["T1"],"steps":[
	    {"send":{"op":"tb.take","key":"x","capacity":4,"refill_per_second":1,"now_ms":0},"expect":{"ok":true,"remaining":2}}]}]}`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	files, err := LoadVectors(path)
	if err != nil {
		t.Fatal(err)
	}
	rep := Run(Config{Serve: serveWith(fault.None), Seed: 1, Budget: time.Second, Clients: 2, Timeout: 10 * time.Second,
		Suites: []string{SuiteVectors}, Primitives: []string{PrimTokenBucket}, Vectors: files})
	var out bytes.Buffer
	rep.Print(&out, "")
	r := rep.Results[0]
	committed, err := LoadVectors("../spec/vectors/tokenbucket.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := len(committed[0].Cases) + 2; r.Cases != want || r.Failed != 1 || r.Failures[0].Case != "mine/wrong-on-purpose" {
		t.Fatalf("want %d cases with mine/wrong-on-purpose failing:\n%s", want, out.String())
	}
	if !strings.Contains(out.String(), `want: {"ok":true,"remaining":2}`) || !strings.Contains(out.String(), `got:  {"ok":true,"remaining":3}`) {
		t.Fatalf("report lacks the answers:\n%s", out.String())
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"protocol":2,"primitive":"xx","cases":[]}`), 0o644)
	if _, err := LoadVectors(bad); err == nil || !strings.Contains(err.Error(), "field primitive") {
		t.Errorf("a bad primitive gave %v, want an error naming the field", err)
	}
}

// TestCrAnswerInvertsCrResponse: every answer of the credit-table vectors,
// rendered by CrResponse and read back by CrAnswer, is the model's output
// again, so the harness judges a driver's answers in the model's terms.
func TestCrAnswerInvertsCrResponse(t *testing.T) {
	n := 0
	for _, sc := range crScripts() {
		names := &SymbolicEpochs{}
		var st model.Credits[string]
		for _, req := range sc.steps {
			if req.Op == OpNew {
				st = model.Credits[string]{}
				continue
			}
			in, err := DecodeCr(&req, names)
			if err != nil {
				continue
			}
			var out model.CrOutput[string]
			st, out = st.Step(in)
			resp := CrResponse(in, out, names)
			back, err := CrAnswer(in, resp, func(raw json.RawMessage) uint64 { e, _ := names.Epoch(raw); return e })
			if err != nil || !back.Equal(out) {
				t.Fatalf("%s: %v answered %s, read back as %v (%v)", sc.name, in, Line(resp), back.Answer(in.Kind), err)
			}
			n++
		}
	}
	if n < 50 {
		t.Fatalf("only %d answers checked", n)
	}
	if _, err := CrAnswer(model.CrInput[string]{Kind: model.CrTake}, Response{Error: ErrLost}, nil); err == nil {
		t.Fatal("lost accepted as an answer of take")
	}
}

// TestDecodeCrDefects: the defects of C12 are bad requests that name the
// protocol's field, decided by model.CrInput.Check.
func TestDecodeCrDefects(t *testing.T) {
	for field, req := range map[string]Request{
		"slot":  crTake(33, 1),
		"epoch": crTake(3, 0),
	} {
		_, err := DecodeCr(&req, &SymbolicEpochs{})
		var bad *BadRequest
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), "field "+field) || !strings.Contains(err.Error(), "C12") {
			t.Errorf("%s: %v, want a bad request naming field %s and C12", Line(req), err, field)
		}
	}
	if _, err := (driverNames{}).Epoch(json.RawMessage("0")); err != nil {
		t.Errorf("epoch 0 refused while parsing (%v); DecodeCr refuses it as C12", err)
	}
}

// TestDivergeNamesTheInvariant: a driver answer that differs from the
// model's is named by the model's classifier, with the operation and both
// answers in the model's rendering; an answer that is not one of the
// operation's breaks the protocol.
func TestDivergeNamesTheInvariant(t *testing.T) {
	sent := []Request{take("k", 10, 10, 5, 1000), take1("k", 10, 10, 0), take1("k", 10, 10, 1000)}
	d := diverge(sent, Response{OK: true, Remaining: F(9)}, NewEpochs())
	if d.Invariant != "T4" || d.Detail != `take "k" cost=1 at 1000ms [cap 10, 10/s]: the model answers ok remaining=3, the driver ok remaining=9` {
		t.Fatalf("%+v", d)
	}
	if d := diverge(sent, Response{OK: true, Remaining: F(3)}, NewEpochs()); d != (Divergence{}) {
		t.Fatalf("an answer the model gives: %+v", d)
	}
	if d := diverge(sent, Response{Error: ErrExhausted}, NewEpochs()); d.Invariant != "protocol" {
		t.Fatalf("exhausted from a take: %+v", d)
	}
	binder := NewEpochs()
	binder.bind("$e1", json.RawMessage(`"a"`))
	cr := []Request{crNew(), reserve("a", "general"), release("a", 1, 1), reserve("a", "general")}
	if d := diverge(cr, Response{OK: true, Slot: I(1), Epoch: json.RawMessage(`"a"`)}, binder); d.Invariant != "C3" {
		t.Fatalf("an epoch issued again: %+v", d)
	}
}
