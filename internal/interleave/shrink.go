package interleave

import "slices"

// shrink reduces a failing schedule found by a random strategy: greedily,
// it cuts the schedule after one of its runs (the replay fallback then
// finishes every thread without another preemption), merges a thread's run
// of steps into that thread's previous or next run (removing the context
// switches around it) or drops it (its steps then run where the fallback
// puts them), and keeps a candidate when it still fails with the same kind
// of failure and has fewer preemptions, or as many and fewer context
// switches. It returns the schedule as executed and its preemptions.
func shrink(c *controller, p program, sched []int8, pre int, kind Kind, stepCap int) ([]int8, int) {
	best, bestPre := slices.Clone(sched), pre
	better := func(s []int8, pr int) bool {
		if pr != bestPre {
			return pr < bestPre
		}
		return len(runsOf(s)) < len(runsOf(best))
	}
	try := func(rs []run) bool {
		r := execute(c, p, &follow{s: flatten(rs)}, runOptions{stepCap: stepCap})
		if r.failure == nil || r.failure.Kind != kind || !better(r.schedule, r.preemptions) {
			return false
		}
		best, bestPre = slices.Clone(r.schedule), r.preemptions
		return true
	}
	for rounds := 0; rounds < 200; rounds++ {
		improved := false
		rs := runsOf(best)
		for i := 1; i < len(rs) && !improved; i++ {
			improved = try(rs[:i:i])
		}
		if improved {
			continue
		}
	candidates:
		for i := range rs {
			t := rs[i].thread
			for _, dir := range []int{-1, +1} {
				for j := i + dir; j >= 0 && j < len(rs); j += dir {
					if rs[j].thread != t {
						continue
					}
					cand := append([]run(nil), rs...)
					cand[j].n += cand[i].n
					cand = append(cand[:i], cand[i+1:]...)
					if try(cand) {
						improved = true
						break candidates
					}
					break
				}
			}
			cand := append([]run(nil), rs[:i]...)
			cand = append(cand, rs[i+1:]...)
			if try(cand) {
				improved = true
				break
			}
		}
		if !improved {
			break
		}
	}
	return best, bestPre
}
