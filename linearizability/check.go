package linearizability

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// Result is the verdict of a check.
type Result string

// Verdicts. Unknown means the checker ran out of time: it is never a pass.
const (
	Ok      Result = "Ok"
	Illegal Result = "Illegal"
	Unknown Result = "Unknown"
)

// Options configure CheckTokenBucket and CheckCredits.
type Options struct {
	// Timeout bounds porcupine's search (0: no bound). When it expires the
	// result is Unknown.
	Timeout time.Duration
	// Dir is where the files of an Illegal or Unknown history are written:
	// <Name>.html (porcupine's visualization) and <Name>.json (the raw
	// history). Empty: nothing is written.
	Dir string
	// Name is the base name of those files; "history" when empty.
	Name string
	// AlwaysWrite writes the files whatever the result.
	AlwaysWrite bool
}

// Report is what one check found.
type Report struct {
	Primitive  string // "tokenbucket" or "credits"
	Result     Result // Ok, Illegal or Unknown
	Ops        int    // operations in the history
	UnknownOps int    // operations among them whose outcome is unknown
	// SettledOps counts the unknown operations held to their interval
	// (Op.Settled; credit histories only: the token-bucket checker keeps
	// every unknown operation open, which is sound and checks fast).
	SettledOps int
	Partitions int // porcupine partitions (keys for the token bucket)
	// Overlapping is the number of operations whose interval overlaps
	// another operation's: the ones whose order the checker had to find.
	Overlapping int
	CheckTime   time.Duration // time spent checking, excluding writing files
	// ListingsUndecided marks a credit history found linearizable without
	// its listings' per-slot reads, whose search with them ran out of
	// ListingsBudget: its listings passed model.CheckListing's real-time
	// rule (C13) only.
	ListingsUndecided bool
	// Detail says what failed: "porcupine: no linearization" or the C3
	// epoch violation found outside porcupine.
	Detail string
	// Invariant is the spec ID a failing history breaks: T11 (token
	// bucket) or C16 (credit table) when porcupine finds no linearization,
	// C3 when CheckEpochs finds an epoch issued twice, C17 when the credit
	// history has linearizations, but each leaves reserved a row that a
	// sweep had to free (FindUnswept); empty when Ok or Unknown.
	Invariant string
	HTMLPath  string // the visualization, when written
	JSONPath  string // the raw history, when written
}

// check runs porcupine's plain check, which stops at the first partition
// that fails. The verbose check a visualization is drawn from runs apart,
// and only when files are written (writeFiles): on an illegal history it
// searches every partition to its end for the longest partial
// linearizations, which can take porcupine to its whole budget, and the
// verdict must not wait for that (a hunt once spent 10 s of its 10 s on one
// history it could have refused in milliseconds).
func check(m porcupine.Model, ops []porcupine.Operation, opt Options) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(m, ops, opt.Timeout)
}

// VisualizationBudget bounds the verbose check that draws a written
// history's visualization. A search it cuts short leaves the partial
// linearizations found so far: the drawing is less complete, the verdict
// the same.
const VisualizationBudget = 2 * time.Second

// ListingsBudget bounds the search of a credit history with its listings'
// per-slot reads, once it is found linearizable without them.
const ListingsBudget = 5 * time.Second

// judge records porcupine's verdict: an Illegal history breaks invariant
// (T11 or C16), since no linearization of it agrees with the model's step
// function named by stepper; Unknown is not a pass.
func (rep *Report) judge(res porcupine.CheckResult, invariant, stepper string, timeout time.Duration) {
	rep.Result = Result(res)
	switch res {
	case porcupine.Illegal:
		rep.Invariant = invariant
		rep.Detail = fmt.Sprintf("porcupine: no linearization of the history agrees with %s (%s)", stepper, invariant)
	case porcupine.Unknown:
		rep.Detail = fmt.Sprintf("porcupine: no verdict within %v (not a pass)", timeout)
	}
}

// CheckTokenBucket checks a token-bucket history with TokenBucketModel. An
// invalid history (Validate) is an error, not a verdict.
func CheckTokenBucket(h TBHistory, opt Options) (Report, error) {
	return checkTokenBucket(h, opt, TokenBucketModel())
}

// CheckTokenBucketTable checks a token-bucket history as CheckTokenBucket
// does, but with TokenBucketTableModel: one search over the whole table,
// which also judges every reclaim's count (T12), a reclaim that overlaps
// another operation taken per key (TableOperations, T11). It is for short
// histories.
func CheckTokenBucketTable(h TBHistory, opt Options) (Report, error) {
	return checkTokenBucket(h, opt, TokenBucketTableModel())
}

func checkTokenBucket(h TBHistory, opt Options, m porcupine.Model) (Report, error) {
	if err := h.Validate(); err != nil {
		return Report{}, err
	}
	ops := h.Operations()
	if m.Partition == nil {
		ops = h.TableOperations() // a reclaim per key (T11)
	}
	rep := Report{Primitive: "tokenbucket", Ops: len(h.Ops), Partitions: 1, Overlapping: overlapping(ops)}
	if m.Partition != nil {
		rep.Partitions = len(m.Partition(ops))
	}
	for _, op := range h.Ops {
		if op.Unknown {
			rep.UnknownOps++
		}
	}
	start := time.Now()
	res := check(m, ops, opt)
	rep.CheckTime = time.Since(start)
	stepper := "model.StepBucket"
	if m.Partition == nil {
		stepper = "model.TBTable.Step"
	}
	rep.judge(res, "T11", stepper, opt.Timeout)
	if rep.Result != Ok || opt.AlwaysWrite {
		if err := writeFiles(&rep, opt, m, ops, h, marks(h.Marks)); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// CheckCredits checks a credit-table history with CheckEpochs,
// CheckListings (each listing by model.CheckListing's real-time rule, C13)
// and CreditsModel. An invalid history (Validate) is an error, not a verdict. An
// Illegal history that is linearizable but for the rows its sweeps had to
// free (C17) is reported as C17, naming the sweep (FindUnswept).
func CheckCredits(h CrHistory, opt Options) (Report, error) {
	return checkCredits(h, opt, CreditsModel())
}

func checkCredits(h CrHistory, opt Options, m porcupine.Model) (Report, error) {
	if err := h.Validate(); err != nil {
		return Report{}, err
	}
	ops := h.Operations()
	rep := Report{Primitive: "credits", Ops: len(h.Ops), Partitions: 1, Overlapping: overlapping(ops)}
	for _, op := range h.Ops {
		if op.Unknown {
			rep.UnknownOps++
			if op.Settled {
				rep.SettledOps++
			}
		}
	}
	start := time.Now()
	var ann []porcupine.Annotation
	if v := CheckEpochs(h); v != nil {
		rep.Result, rep.Invariant = Illegal, "C3"
		rep.Detail = v.Error()
		for _, i := range []int{v.First, v.Second} {
			op := h.Ops[i]
			ann = append(ann, porcupine.Annotation{ClientId: op.Client, Start: op.Call, End: op.Return,
				Description: fmt.Sprintf("epoch %d", v.Epoch), Details: v.Error(), BackgroundColor: "#ffb3b3"})
		}
	} else if v := CheckListings(h); v != nil {
		rep.Result, rep.Invariant = Illegal, v.Err.Invariant
		rep.Detail = v.Error()
		op := h.Ops[v.Index]
		ann = append(ann, porcupine.Annotation{ClientId: op.Client, Start: op.Call, End: op.Return,
			Description: v.Err.Invariant, Details: v.Error(), BackgroundColor: "#ffb3b3"})
	} else {
		// The history without its listings' reads first: a search that
		// fails proves the rest illegal as fast as before listings were
		// recorded (each read pending multiplies what an exhaustive
		// search of an illegal history tries). Only a history legal
		// without them is searched again with them.
		// A search with the reads that runs out of its budget (ListingsBudget)
		// leaves the bare verdict standing, and says so
		// (ListingsUndecided): the reads of a long history with many
		// contested slots can take porcupine past any budget.
		var res porcupine.CheckResult
		if bare := h.bareOperations(); len(bare) < len(ops) {
			if res = check(m, bare, opt); res == porcupine.Ok {
				ro := opt
				if ro.Timeout == 0 || ro.Timeout > ListingsBudget {
					ro.Timeout = ListingsBudget
				}
				switch r2 := check(m, ops, ro); r2 {
				case porcupine.Unknown:
					rep.ListingsUndecided = true
					ops = bare
				default:
					res = r2
				}
			} else {
				ops = bare
			}
		} else {
			res = check(m, ops, opt)
		}
		rep.judge(res, "C16", "model.Credits", opt.Timeout)
		if rep.Result == Illegal {
			if v, ok := FindUnswept(h, m, opt.Timeout); ok {
				rep.Invariant, rep.Detail = "C17", v.Error()
				op := h.Ops[v.Sweep]
				ann = append(ann, porcupine.Annotation{ClientId: op.Client, Start: op.Call, End: op.Return,
					Description: "C17", Details: v.Error(), BackgroundColor: "#ffb3b3"})
			}
		}
	}
	rep.CheckTime = time.Since(start)
	if rep.Result != Ok || opt.AlwaysWrite {
		if err := writeFiles(&rep, opt, m, ops, h, append(marks(h.Marks), ann...)); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// overlapping counts the operations whose [Call, Return] interval meets
// another's. Unknown operations (Return = math.MaxInt64) are left out: they
// would count as overlapping everything after them.
func overlapping(ops []porcupine.Operation) int {
	var byCall []porcupine.Operation
	for _, op := range ops {
		if op.Return != math.MaxInt64 {
			byCall = append(byCall, op)
		}
	}
	sort.Slice(byCall, func(i, j int) bool { return byCall[i].Call < byCall[j].Call })
	n := 0
	maxRet := int64(math.MinInt64)
	for i, op := range byCall {
		if op.Call <= maxRet || (i+1 < len(byCall) && byCall[i+1].Call <= op.Return) {
			n++
		}
		maxRet = max(maxRet, op.Return)
	}
	return n
}

func marks(ms []Mark) []porcupine.Annotation {
	out := make([]porcupine.Annotation, 0, len(ms))
	for _, m := range ms {
		out = append(out, porcupine.Annotation{Tag: m.Tag, Start: m.At, Description: m.Text})
	}
	return out
}

// writeFiles writes the raw history and porcupine's visualization into
// opt.Dir. The visualization is drawn from a verbose check of ops, within
// VisualizationBudget (and opt.Timeout, when shorter).
func writeFiles(rep *Report, opt Options, m porcupine.Model, ops []porcupine.Operation, history any, ann []porcupine.Annotation) error {
	if opt.Dir == "" {
		return nil
	}
	name := opt.Name
	if name == "" {
		name = "history"
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return fmt.Errorf("linearizability: %w", err)
	}
	rep.JSONPath = filepath.Join(opt.Dir, name+".json")
	data, err := json.MarshalIndent(history, "", " ")
	if err != nil {
		return fmt.Errorf("linearizability: encoding history: %w", err)
	}
	if err := os.WriteFile(rep.JSONPath, data, 0o644); err != nil {
		return fmt.Errorf("linearizability: %w", err)
	}
	budget := VisualizationBudget
	if opt.Timeout > 0 {
		budget = min(budget, opt.Timeout)
	}
	_, info := porcupine.CheckOperationsVerbose(m, ops, budget)
	info.AddAnnotations(ann)
	rep.HTMLPath = filepath.Join(opt.Dir, name+".html")
	if err := porcupine.VisualizePath(m, info, rep.HTMLPath); err != nil {
		return fmt.Errorf("linearizability: writing visualization: %w", err)
	}
	return nil
}

// SavedHistory is the JSON file CheckTokenBucket and CheckCredits write,
// read back for a replay: exactly one of the two histories is set.
type SavedHistory struct {
	TokenBucket *TBHistory
	Credits     *CrHistory
}

// LoadHistory reads a history file written by a check. The primitive is
// recognised from the operations' input fields (a token-bucket input has
// "Key" and "Limits", a credit-table input "Holder" and "Token").
func LoadHistory(path string) (SavedHistory, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return SavedHistory{}, fmt.Errorf("linearizability: %w", err)
	}
	var probe struct {
		Ops []struct {
			Input map[string]json.RawMessage `json:"input"`
		} `json:"ops"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return SavedHistory{}, fmt.Errorf("linearizability: %s: %w", path, err)
	}
	if len(probe.Ops) == 0 {
		return SavedHistory{}, fmt.Errorf("linearizability: %s: ops must hold at least one operation", path)
	}
	_, tb := probe.Ops[0].Input["Limits"]
	_, cr := probe.Ops[0].Input["Holder"]
	switch {
	case tb:
		var h TBHistory
		if err := json.Unmarshal(data, &h); err != nil {
			return SavedHistory{}, fmt.Errorf("linearizability: %s: %w", path, err)
		}
		return SavedHistory{TokenBucket: &h}, nil
	case cr:
		var h CrHistory
		if err := json.Unmarshal(data, &h); err != nil {
			return SavedHistory{}, fmt.Errorf("linearizability: %s: %w", path, err)
		}
		return SavedHistory{Credits: &h}, nil
	}
	return SavedHistory{}, errors.New("linearizability: " + path + ": ops[0].input is neither a token-bucket input (Limits) nor a credit-table input (Holder)")
}
