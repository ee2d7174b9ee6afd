package tokenbucket

import (
	"fmt"
	"hash/maphash"
	"reflect"
	"runtime"
	"unsafe"
)

// keyHash returns the 64-bit hash of keys of type K under seed, chosen once
// for the type: maphash.String for a string type, a seeded bijective mix
// of the bits for an integer type, and maphash.Comparable for every other
// type. The first two do what maphash.Comparable does for those types
// (it hashes a string's bytes, an integer's memory) without its generic
// dispatch, which costs a take on a string key about as much as the rest
// of the lookup (bench/RESULTS.md).
//
// Every key is hashed before the table looks it up, so the hash is where a
// key that could never be found again is refused: one not equal to itself
// (a NaN float, or a struct, array, complex or interface holding one)
// panics naming the key, and an interface key whose dynamic value cannot be
// hashed panics naming the type, not with the runtime's message. Only key
// types that can hold a float or an interface pay for the check (a
// comparison of the key with itself; for an interface, a deferred recover);
// strings, integers and other keys are hashed as before.
//
// Why an integer's hash may be a bijection: the trie spreads keys by their
// hash's bits and chains only keys whose 64-bit hashes are equal, so a
// bijection never chains two integer keys; the seed, drawn per trie, keeps
// the bits a key lands on unknowable from outside, as maphash's does.
func keyHash[K comparable](seed maphash.Seed) func(K) uint64 {
	t := reflect.TypeFor[K]()
	switch t.Kind() {
	case reflect.String:
		// K's underlying type is string: its memory is a string header.
		return func(k K) uint64 { return maphash.String(seed, *(*string)(unsafe.Pointer(&k))) }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		salt := maphash.String(seed, "tollgate integer keys")
		switch t.Size() {
		case 8:
			return func(k K) uint64 { return mix64(*(*uint64)(unsafe.Pointer(&k)) ^ salt) }
		case 4:
			return func(k K) uint64 { return mix64(uint64(*(*uint32)(unsafe.Pointer(&k))) ^ salt) }
		case 2:
			return func(k K) uint64 { return mix64(uint64(*(*uint16)(unsafe.Pointer(&k))) ^ salt) }
		case 1:
			return func(k K) uint64 { return mix64(uint64(*(*uint8)(unsafe.Pointer(&k))) ^ salt) }
		}
	}
	floats, ifaces := mayFail(t)
	switch {
	case ifaces:
		// An interface's dynamic value may be NaN, or of a type that cannot
		// be compared or hashed (a slice, a map, a func), which the runtime
		// finds only at the comparison: its panic is recovered and raised
		// again naming the key's type.
		return func(k K) uint64 {
			defer unhashable[K]()
			if k != k {
				panic(notSelfEqual(k))
			}
			return maphash.Comparable(seed, k)
		}
	case floats:
		return func(k K) uint64 {
			if k != k {
				panic(notSelfEqual(k))
			}
			return maphash.Comparable(seed, k)
		}
	}
	return func(k K) uint64 { return maphash.Comparable(seed, k) }
}

// mayFail reports whether a key of type t can hold a float or complex
// number (floats), which is not equal to itself when it is NaN, or an
// interface (ifaces), whose dynamic value can be NaN or a value that cannot
// be hashed. A key of any other comparable type is always equal to itself
// and is hashed without a check.
func mayFail(t reflect.Type) (floats, ifaces bool) {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true, false
	case reflect.Interface:
		return true, true
	case reflect.Array:
		if t.Len() == 0 {
			return false, false
		}
		return mayFail(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			f, n := mayFail(t.Field(i).Type)
			floats, ifaces = floats || f, ifaces || n
		}
	}
	return floats, ifaces
}

// notSelfEqual is the panic of a key that is not equal to itself (NaN, or a
// struct, array or interface holding one). Such a key could never find its
// bucket again: every call would make it a new, full one and admit it, so
// the table would not limit it at all. It is refused as a defect of the
// caller, like a nil clock.
func notSelfEqual[K comparable](k K) string {
	return fmt.Sprintf("tokenbucket: key %v (%T) is not equal to itself (NaN): "+
		"it could never find its bucket again, so every call would be admitted from a new, full one; "+
		"refused (defect: map NaN to a key of its own, or refuse it, before the table)", k, k)
}

// unhashable, deferred by the hash of an interface key type, turns the
// runtime's panic for a key that cannot be compared or hashed (a slice, map
// or func inside an interface) into one naming the key type.
func unhashable[K comparable]() {
	r := recover()
	if r == nil {
		return
	}
	if e, ok := r.(runtime.Error); ok {
		panic(fmt.Sprintf("tokenbucket: a key of type %v cannot be hashed (%v): "+
			"a Table's keys must be comparable values, and an interface key's dynamic value must be too (defect)",
			reflect.TypeFor[K](), e))
	}
	panic(r)
}

// mix64 is a bijection of 64-bit words whose every output bit depends on
// every input bit: the output function of SplitMix64 (Steele, Lea and
// Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014,
// with David Stafford's Mix13 constants), xor-shifts and odd multipliers,
// each invertible.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
