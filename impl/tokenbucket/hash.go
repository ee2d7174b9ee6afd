package tokenbucket

import (
	"hash/maphash"
	"reflect"
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
	return func(k K) uint64 { return maphash.Comparable(seed, k) }
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
