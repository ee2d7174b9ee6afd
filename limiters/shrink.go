package limiters

// Shrink returns a shorter list of steps that still fails: chunks of
// halving size are removed while fails stays true, down to single steps,
// until no single step can go (a 1-minimal list, in the sense of delta
// debugging). fails must be deterministic; it is never called on steps
// itself, which are assumed to fail.
func Shrink(steps []Step, fails func([]Step) bool) []Step {
	cur := append([]Step(nil), steps...)
	for chunk := max(len(cur)/2, 1); ; {
		removed := false
		for i := 0; i+chunk <= len(cur); {
			try := append(append([]Step(nil), cur[:i]...), cur[i+chunk:]...)
			if len(try) > 0 && fails(try) {
				cur, removed = try, true
				continue
			}
			i += chunk
		}
		if chunk == 1 && !removed {
			return cur
		}
		if !removed {
			chunk = max(chunk/2, 1)
		}
	}
}
