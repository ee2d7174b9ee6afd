package interleave

import (
	"fmt"
	"slices"
	"unsafe"
)

// Memory safety inside explored runs. The explored copies of impl/ record
// every object they allocate (hooked.Alloc) and route every unsafe.Add and
// every conversion of an unsafe.Pointer to a typed pointer through the
// controller (hooked.UnsafeAdd, hooked.UnsafeCast), which checks it against
// the object the pointer points into: an access that would leave its object
// (a 4-way inner node read as a 16-way one, an inner node read as a cell)
// panics at its step, and the run fails with the schedule that reached it,
// deterministically. Without the check such a read lands in whatever the
// allocator put next, and may pass, or crash the collector much later.
// (A -race build's checkptr catches the conversion too, but only in that
// build: the default explore run is an ordinary one.)

// object is one recorded allocation.
type object struct {
	base unsafe.Pointer
	size uintptr
}

// objects is the run's recorded allocations, sorted by address. Holding
// the pointers keeps the objects alive, so an address names one object for
// the whole run.
type objects struct {
	list []object
}

func (o *objects) reset() {
	clear(o.list)
	o.list = o.list[:0]
}

// containing is the recorded object that holds the byte at address p.
func (o *objects) containing(p uintptr) (object, bool) {
	i, _ := slices.BinarySearchFunc(o.list, p, byBase)
	// o.list[i] is the first object at or after p.
	if i < len(o.list) && uintptr(o.list[i].base) == p {
		return o.list[i], true
	}
	if i == 0 {
		return object{}, false
	}
	x := o.list[i-1]
	if p < uintptr(x.base)+x.size {
		return x, true
	}
	return object{}, false
}

// Alloc implements hooked.Bounds.
func (c *controller) Alloc(p unsafe.Pointer, size uintptr) {
	if size == 0 {
		return
	}
	o := &c.objs
	i, _ := slices.BinarySearchFunc(o.list, uintptr(p), byBase)
	o.list = slices.Insert(o.list, i, object{p, size})
}

func byBase(x object, p uintptr) int {
	switch b := uintptr(x.base); {
	case b < p:
		return -1
	case b > p:
		return 1
	}
	return 0
}

// Within implements hooked.Bounds.
func (c *controller) Within(base unsafe.Pointer, p, size uintptr, what string, typ any) {
	from := p
	if base != nil {
		from = uintptr(base)
	}
	x, ok := c.objs.containing(from)
	if !ok {
		return // memory the explored code did not allocate: not judged
	}
	end := uintptr(x.base) + x.size
	if p < uintptr(x.base) || p+size > end {
		if typ != nil {
			what = fmt.Sprintf("%s to %T", what, typ)
		}
		panic(fmt.Sprintf("memory safety: %s reaches [%#x, %#x), outside its object of %d bytes at %#x",
			what, p, p+size, x.size, uintptr(x.base)))
	}
}
