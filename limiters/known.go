package limiters

// Classify is the verdict's reading for a human: for a violation, whether
// it is a library bug (with the upstream issue where one is known), a
// behaviour the library documents or its own tests make intended, or the
// property asking more than the library promises. Empty when nothing is
// known to say.
func Classify(r Result) string {
	if r.Verdict != Violated && r.Verdict != Failed {
		return ""
	}
	switch r.Library + " " + r.Workload + " " + r.Prop {
	}
	return ""
}
