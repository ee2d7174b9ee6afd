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

// encodeSchedule writes s run-length encoded.
func encodeSchedule(s []int8) string {
	var b strings.Builder
	for i := 0; i < len(s); {
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
		th, cnt, ok := strings.Cut(part, "x")
		t, err1 := strconv.Atoi(th)
		n, err2 := strconv.Atoi(cnt)
		if !ok || err1 != nil || err2 != nil || t < 0 || t > 63 || n < 1 || n > 1<<20 {
			return nil, fmt.Errorf("explore: schedule %q: %q is not THREADxCOUNT (thread 0..63, count >= 1)", text, part)
		}
		for k := 0; k < n; k++ {
			out = append(out, int8(t))
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
	s []int8
}

func (f *follow) choose(v *view) (int, bool) {
	if v.depth < len(f.s) {
		if t := int(f.s[v.depth]); t < len(v.states) && runnable(v.states[t]) {
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
