package hooked

import (
	"maps"
	"runtime"
	"sync"
	"sync/atomic"
)

// Finding a call site. runtime.Callers walks the stack with the unwinder,
// which reads every frame's tables to expand inlined calls: about a
// microsecond a call, fine for a trace, a third of the time of a run that
// measures interleaving coverage, which records the site of every step.
// The PC Callers returns for a frame near the caller depends only on the
// physical frames in between, and their return addresses are two loads
// apart through the frame pointers. So pcAbove asks Callers once for each
// chain of siteFrames return addresses (and each skip) and remembers the
// answer; a chain whose answer lies further up the stack than the chain
// reaches is remembered as one to ask Callers about every time. Where frame
// pointers cannot be read (callerFrames fills zeros), every call asks.

// siteFrames is how many physical frames above pcAbove a key names.
const siteFrames = 6

type siteKey struct {
	skip int
	rets [siteFrames]uintptr
}

type siteAnswer struct {
	pc     uintptr
	cached bool // false: the chain does not decide the answer, ask Callers
}

// siteCache is the answers: a map read without a lock and replaced whole
// by one with an answer more (chains are few: one per path through the
// code to a site, met once each).
var (
	siteCache atomic.Pointer[map[siteKey]siteAnswer]
	siteMu    sync.Mutex // serializes replacements
)

func rememberSite(k siteKey, a siteAnswer) {
	siteMu.Lock()
	defer siteMu.Unlock()
	m := map[siteKey]siteAnswer{}
	if old := siteCache.Load(); old != nil {
		m = maps.Clone(*old)
	}
	m[k] = a
	siteCache.Store(&m)
}

// pcAbove returns what runtime.Callers(skip+2) would return first if its
// caller called it: the PC of the frame skip frames above pcAbove's caller
// (skip 0: in that caller), logical frames counted, inlined ones included;
// 0 when the stack is not that deep.
//
//go:noinline
func pcAbove(skip int) uintptr {
	var rets [siteFrames + 1]uintptr
	callerFrames(&rets)
	if rets[0] == 0 {
		return slowPC(skip)
	}
	k := siteKey{skip: skip, rets: [siteFrames]uintptr(rets[:siteFrames])}
	if m := siteCache.Load(); m != nil {
		if a, ok := (*m)[k]; ok {
			if a.cached {
				return a.pc
			}
			return slowPC(skip)
		}
	}
	var pcs [32]uintptr
	n := runtime.Callers(2, pcs[:]) // pcs[0] is the caller's frame: rets[0]
	a := decide(pcs[:n], rets[:], skip)
	rememberSite(k, a)
	if skip < n { // Callers' answer, asked just now, whether remembered or not
		return pcs[skip]
	}
	return 0
}

// slowPC is pcAbove's answer from runtime.Callers alone (its caller's
// frame counted as pcAbove's caller's).
//
//go:noinline
func slowPC(skip int) uintptr {
	var pc [1]uintptr
	if runtime.Callers(skip+3, pc[:]) == 0 {
		return 0
	}
	return pc[0]
}

// decide says whether the physical frames whose return addresses are rets
// decide the PC skip logical frames up in pcs (Callers' PCs from the first
// of those frames on). The first logical frame of a physical frame is its
// return address itself, so each of rets[1:] found in pcs, in order, is
// where its frame begins; one not found is a frame Callers leaves out (a
// wrapper), which the next one found bounds. The answer is decided when it
// lies before the last frame found: every frame up to it is in the key.
func decide(pcs, rets []uintptr, skip int) siteAnswer {
	if len(pcs) == 0 || pcs[0] != rets[0] {
		return siteAnswer{}
	}
	at, end := 0, 0
	for _, r := range rets[1:] {
		if r == 0 {
			break // the stack ends
		}
		i := at + 1
		for i < len(pcs) && pcs[i] != r {
			i++
		}
		if i == len(pcs) {
			continue // left out: the next frame found bounds it
		}
		at, end = i, i
	}
	if skip >= end {
		return siteAnswer{}
	}
	return siteAnswer{pc: pcs[skip], cached: true}
}
