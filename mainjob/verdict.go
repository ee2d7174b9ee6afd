package mainjob

import "github.com/tollgate/tollgate/linearizability"

// A Verdict is the outcome of a job or of one of its checks. The order
// matters: a job's verdict is the worst of its checks' (Merge).
type Verdict int

const (
	// Ok: every check ran to the end and passed.
	Ok Verdict = iota
	// Unknown: no check failed, but some could not be decided (porcupine
	// ran out of time, or calls had outcomes nobody can know). Not a pass.
	Unknown
	// Illegal: some check failed (a history that is not linearizable, a
	// sequential answer that differs from the model's, an acknowledged
	// write lost).
	Illegal
)

func (v Verdict) String() string {
	switch v {
	case Ok:
		return "Ok"
	case Unknown:
		return "Unknown"
	case Illegal:
		return "Illegal"
	}
	return "Verdict(?)"
}

// Merge is the verdict of two checks together: Illegal if either is,
// else Unknown if either is, else Ok.
func (v Verdict) Merge(w Verdict) Verdict { return max(v, w) }

// verdictOf is the verdict of a porcupine result.
func verdictOf(r linearizability.Result) Verdict {
	switch r {
	case linearizability.Ok:
		return Ok
	case linearizability.Unknown:
		return Unknown
	}
	return Illegal
}
