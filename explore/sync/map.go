package sync

import (
	"sync"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// Map is sync.Map whose every method is a switch point of the explorer:
// so a Load and a Store of one key, two operations that code sometimes
// takes for one, may be separated by another thread's, and a lost update
// between them is found. Each operation is one access of the Map's word
// (a load for Load, Range's steps and an operation that changes nothing,
// a swap otherwise, its values the key's), so any two operations on one
// Map that are not both loads are dependent, and
// an operation that writes happens before one that follows it, as the
// memory model says of sync.Map.
//
// Inside, it is a map under a mutex, keeping its keys in the order they
// were first stored, so that Range visits them in an order every replay of
// a schedule repeats (sync.Map's order depends on a random hash seed).
// With no explorer running it is a correct concurrent map, slower than
// sync.Map under contention. Its zero value is empty. It must not be
// copied after first use.
type Map struct {
	mu   sync.Mutex
	vals map[any]any
	keys []any // in the order of their first Store, deleted ones removed
}

// op runs f, which reads or changes the map under its mutex, as one
// operation of the explorer (a switch point before it) when one runs: op
// is what it may do (Load, Store, or CAS for an operation that may change
// nothing). f returns what it read (the value of its key), what it stored,
// and whether it wrote: an operation that changed nothing is reported as a
// load.
func (m *Map) op(op hooked.Op, f func() (old, new any, wrote bool), site uintptr) {
	s := hooked.Current()
	if s == nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		f()
		return
	}
	w := unsafe.Pointer(m)
	s.Before(w, op)
	m.mu.Lock()
	old, new, wrote := f()
	m.mu.Unlock()
	a := hooked.Access{Word: w, Op: hooked.Load, Old: old, OK: true, Site: site}
	if wrote {
		// A swap, not a store: a write of one key must not replace
		// what the writes of other keys released (a race detector
		// joins a swap's clock into the word's, and replaces it for a
		// store), or a Load of a key would not acquire the Store of it
		// that came before another key's.
		a.Op, a.New = hooked.Swap, new
	}
	s.After(a)
}

func (m *Map) set(key, value any) {
	if m.vals == nil {
		m.vals = map[any]any{}
	}
	if _, ok := m.vals[key]; !ok {
		m.keys = append(m.keys, key)
	}
	m.vals[key] = value
}

func (m *Map) del(key any) {
	delete(m.vals, key)
	for i, k := range m.keys {
		if k == key {
			m.keys = append(m.keys[:i], m.keys[i+1:]...)
			return
		}
	}
}

// Load returns the value stored for key, or nil, and whether it was
// there.
func (m *Map) Load(key any) (value any, ok bool) {
	m.op(hooked.Load, func() (any, any, bool) { value, ok = m.vals[key]; return value, nil, false }, hooked.Site(1))
	return value, ok
}

// Store sets the value for key.
func (m *Map) Store(key, value any) {
	m.op(hooked.Store, func() (any, any, bool) { old := m.vals[key]; m.set(key, value); return old, value, true }, hooked.Site(1))
}

// LoadOrStore returns the existing value for key if there is one (loaded
// true); otherwise it stores value and returns it.
func (m *Map) LoadOrStore(key, value any) (actual any, loaded bool) {
	m.op(hooked.CAS, func() (any, any, bool) {
		if actual, loaded = m.vals[key]; loaded {
			return actual, nil, false
		}
		m.set(key, value)
		actual = value
		return nil, value, true
	}, hooked.Site(1))
	return actual, loaded
}

// LoadAndDelete deletes the value for key, returning the previous value if
// any (loaded reports whether there was one).
func (m *Map) LoadAndDelete(key any) (value any, loaded bool) {
	m.op(hooked.CAS, func() (any, any, bool) {
		if value, loaded = m.vals[key]; loaded {
			m.del(key)
		}
		return value, nil, loaded
	}, hooked.Site(1))
	return value, loaded
}

// Delete deletes the value for key.
func (m *Map) Delete(key any) {
	m.op(hooked.CAS, func() (any, any, bool) {
		v, ok := m.vals[key]
		if ok {
			m.del(key)
		}
		return v, nil, ok
	}, hooked.Site(1))
}

// Swap stores value for key and returns the previous value if any (loaded
// reports whether there was one).
func (m *Map) Swap(key, value any) (previous any, loaded bool) {
	m.op(hooked.Store, func() (any, any, bool) {
		previous, loaded = m.vals[key]
		m.set(key, value)
		return previous, value, true
	}, hooked.Site(1))
	return previous, loaded
}

// CompareAndSwap stores new for key if the value stored is equal to old
// (which must be of a comparable type) and reports whether it did.
func (m *Map) CompareAndSwap(key, old, new any) (swapped bool) {
	m.op(hooked.CAS, func() (any, any, bool) {
		v, ok := m.vals[key]
		if ok && v == old {
			m.set(key, new)
			swapped = true
		}
		return v, new, swapped
	}, hooked.Site(1))
	return swapped
}

// CompareAndDelete deletes the entry for key if its value is equal to old
// (which must be of a comparable type) and reports whether it did.
func (m *Map) CompareAndDelete(key, old any) (deleted bool) {
	m.op(hooked.CAS, func() (any, any, bool) {
		v, ok := m.vals[key]
		if ok && v == old {
			m.del(key)
			deleted = true
		}
		return v, nil, deleted
	}, hooked.Site(1))
	return deleted
}

// Range calls f for each key and value in the map, in the order the keys
// were first stored, until f returns false. As for sync.Map, it is no
// snapshot: each key present when Range starts is visited at most once,
// with its value when it is reached (a key deleted before is skipped), and
// keys stored meanwhile may not be. Under the explorer, taking the keys
// and reading each value is one operation each.
func (m *Map) Range(f func(key, value any) bool) {
	var keys []any
	site := hooked.Site(1)
	m.op(hooked.Load, func() (any, any, bool) { keys = append(keys, m.keys...); return len(keys), nil, false }, site)
	for _, k := range keys {
		var v any
		var ok bool
		m.op(hooked.Load, func() (any, any, bool) { v, ok = m.vals[k]; return v, nil, false }, site)
		if ok && !f(k, v) {
			return
		}
	}
}

// Clear deletes every entry.
func (m *Map) Clear() {
	m.op(hooked.Store, func() (any, any, bool) {
		clear(m.vals)
		m.keys = m.keys[:0]
		return nil, nil, true
	}, hooked.Site(1))
}
