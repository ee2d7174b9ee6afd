package bench

import "runtime"

// MemoryPerKey builds design d, takes one token from each of keys distinct
// keys (so every bucket exists and then sits idle), and returns the growth
// of the live heap divided by keys, in bytes. Boxing a key for a sync.Map
// is part of that design's cost and is counted.
func MemoryPerKey(d TBDesign, keys int) float64 {
	lim := Admit.Limits(keys)
	before := liveHeap()
	inst := d.New(lim, keys)
	for k := range uint64(keys) {
		inst.TakeAt(admitNowMs, k, any(k))
	}
	after := liveHeap()
	runtime.KeepAlive(inst)
	return float64(int64(after)-int64(before)) / float64(keys)
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// MemoryDesigns lists the designs whose per-key memory means something (a
// single shared limiter has none).
func MemoryDesigns() []TBDesign {
	var ds []TBDesign
	for _, d := range TBDesigns() {
		if d.Name != XRateSingle {
			ds = append(ds, d)
		}
	}
	return ds
}
