package interleave

import (
	"fmt"
	"strconv"
	"strings"
)

// A schedule is the thread of every step of a run, written run-length
// encoded: "0x3.1x2.0x5" is three steps of thread 0, two of thread 1, five
// of thread 0. Replaying a schedule runs exactly those steps; a schedule
// that names a thread that has finished, or ends while threads remain,
// continues with the thread that ran last, or else the lowest one still
// running (so a shortened or merged schedule still describes a whole run).

//
// A step whose select chose among several ready cases (chan.go) is
// followed by its choice, a negative entry -1-k for case k, written "sK"
// after its run: "0x2.1x1s1.0x3" is two steps of thread 0, one of thread 1
// whose select took case 1, three of thread 0. A step whose select has
// no choice recorded takes its first ready case.

// encodeSchedule writes s run-length encoded.
func encodeSchedule(s []int8) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] < 0 {
			// A choice with no step before it: only in a cut schedule.
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString("s" + strconv.Itoa(int(-1-s[i])))
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.Itoa(int(s[i])))
		b.WriteByte('x')
		b.WriteString(strconv.Itoa(j - i))
		if j < len(s) && s[j] < 0 {
			b.WriteString("s" + strconv.Itoa(int(-1-s[j])))
			j++
		}
		i = j
	}
	return b.String()
}

// ParseSchedule reads a schedule written by a failure report.
func ParseSchedule(text string) ([]int8, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	var out []int8
	for _, part := range strings.Split(text, ".") {
		choice := -1
		if before, after, ok := strings.Cut(part, "s"); ok {
			k, err := strconv.Atoi(after)
			if err != nil || k < 0 || k > 100 {
				return nil, fmt.Errorf("explore: schedule %q: %q: a select's case is sK with K 0..100", text, part)
			}
			choice, part = k, before
		}
		if part == "" && choice >= 0 {
			out = append(out, choiceEntry(choice))
			continue
		}
		th, cnt, ok := strings.Cut(part, "x")
		t, err1 := strconv.Atoi(th)
		n, err2 := strconv.Atoi(cnt)
		if !ok || err1 != nil || err2 != nil || t < 0 || t >= maxThreads || n < 1 || n > 1<<20 {
			return nil, fmt.Errorf("explore: schedule %q: %q is not THREADxCOUNT (thread 0..%d, count >= 1), with sCASE after it for a select's choice", text, part, maxThreads-1)
		}
		for k := 0; k < n; k++ {
			out = append(out, int8(t))
		}
		if choice >= 0 {
			out = append(out, choiceEntry(choice))
		}
	}
	return out, nil
}

// runs splits a schedule into its maximal runs of one thread.
type run struct {
	thread int8
	n      int
}

func runsOf(s []int8) []run {
	var out []run
	for _, t := range s {
		if len(out) > 0 && out[len(out)-1].thread == t {
			out[len(out)-1].n++
			continue
		}
		out = append(out, run{t, 1})
	}
	return out
}

func flatten(rs []run) []int8 {
	var out []int8
	for _, r := range rs {
		for k := 0; k < r.n; k++ {
			out = append(out, r.thread)
		}
	}
	return out
}

// follow replays a fixed schedule (with the fallback described above).
type follow struct {
	s   []int8
	pos int // the next entry
}

func (f *follow) choose(v *view) (int, bool) {
	for f.pos < len(f.s) && f.s[f.pos] < 0 {
		f.pos++ // a choice no select of the step before asked for
	}
	if f.pos < len(f.s) {
		t := int(f.s[f.pos])
		f.pos++
		if t < len(v.states) && runnable(v.states[t]) {
			return t, true
		}
	}
	if v.last >= 0 && runnable(v.states[v.last]) {
		return v.last, true
	}
	for t, st := range v.states {
		if runnable(st) {
			return t, true
		}
	}
	return 0, false
}

func (f *follow) stepped(*stepRec) {}

// pick takes the case the schedule records after the current step, if it
// is ready; else the first ready case.
func (f *follow) pick(ready []int) int {
	if f.pos < len(f.s) && f.s[f.pos] < 0 {
		k := int(-1 - f.s[f.pos])
		f.pos++
		for _, r := range ready {
			if r == k {
				return k
			}
		}
	}
	return ready[0]
}
