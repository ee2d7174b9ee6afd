package seam

import "sync/atomic"

// Pointer is an atomic *T: sync/atomic.Pointer in this build.
type Pointer[T any] struct{ v atomic.Pointer[T] }

// Load atomically loads the pointer.
func (p *Pointer[T]) Load() *T { return p.v.Load() }

// Store atomically stores v.
func (p *Pointer[T]) Store(v *T) { p.v.Store(v) }

// CompareAndSwap executes the compare-and-swap operation on the pointer.
func (p *Pointer[T]) CompareAndSwap(old, new *T) bool { return p.v.CompareAndSwap(old, new) }

// Uint64 is an atomic uint64: sync/atomic.Uint64 in this build.
type Uint64 struct{ v atomic.Uint64 }

// Load atomically loads the value.
func (u *Uint64) Load() uint64 { return u.v.Load() }

// Add atomically adds delta and returns the new value.
func (u *Uint64) Add(delta uint64) uint64 { return u.v.Add(delta) }

// Store atomically stores v. (The real tables never store to a counter; the
// method exists so that a mutant patch can draw an epoch by load-then-store.)
func (u *Uint64) Store(v uint64) { u.v.Store(v) }

// Bool is an atomic bool: sync/atomic.Bool in this build.
type Bool struct{ v atomic.Bool }

// Load atomically loads the value.
func (b *Bool) Load() bool { return b.v.Load() }

// Store atomically stores v.
func (b *Bool) Store(v bool) { b.v.Store(v) }
