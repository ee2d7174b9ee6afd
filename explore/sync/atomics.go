package sync

import "sync/atomic"

func atomicLoad(p *uint32) bool { return atomic.LoadUint32(p) != 0 }
func atomicStore(p *uint32)     { atomic.StoreUint32(p, 1) }
