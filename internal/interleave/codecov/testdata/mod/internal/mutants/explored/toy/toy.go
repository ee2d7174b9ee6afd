package toy

type T struct{ n int }

func (t *T) Inc(ok bool) int {
	if ok {
		t.n++
	}
	if !ok {
		t.n--
	}
	return t.n
}
