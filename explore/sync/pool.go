package sync

import (
	"sync"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// Pool is sync.Pool, made deterministic under the explorer: there Get
// always answers New() (nil without New) and Put drops the value, one of
// the behaviours sync.Pool allows (it may drop any pooled value at any
// time). A real pool's answers depend on the garbage collector and on
// which processor runs the caller, so a schedule would not replay. With
// no explorer it is a sync.Pool.
type Pool struct {
	p sync.Pool
	// New, as sync.Pool's, makes a value when Get has none to give.
	New func() any
}

// Get returns a value from the pool, or New's, or nil.
func (p *Pool) Get() any {
	if hooked.Current() == nil {
		if x := p.p.Get(); x != nil {
			return x
		}
	}
	if p.New != nil {
		return p.New()
	}
	return nil
}

// Put adds x to the pool (under the explorer: drops it).
func (p *Pool) Put(x any) {
	if hooked.Current() == nil && x != nil {
		p.p.Put(x)
	}
}
