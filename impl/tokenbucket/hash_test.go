package tokenbucket

import (
	"hash/maphash"
	"math"
	"math/rand/v2"
	"testing"
)

type userID string

type point struct{ x, y int32 }

// TestKeyHashString: a key of a string type hashes as maphash.String of
// its bytes, a named string type included.
func TestKeyHashString(t *testing.T) {
	seed := maphash.MakeSeed()
	hs, hu := keyHash[string](seed), keyHash[userID](seed)
	for _, k := range []string{"", "a", "user:42", string(make([]byte, 1000)), "\x00\xff"} {
		if got, want := hs(k), maphash.String(seed, k); got != want {
			t.Errorf("string %q: %#x, want maphash.String's %#x", k, got, want)
		}
		if got, want := hu(userID(k)), maphash.String(seed, k); got != want {
			t.Errorf("userID %q: %#x, want %#x", k, got, want)
		}
	}
}

// TestKeyHashIntegersNeverCollide: an integer key's hash is a bijection
// of its bits, so every value of a small type (all of them) and a range
// of a large one around zero get distinct hashes, and the same value the
// same one.
func TestKeyHashIntegersNeverCollide(t *testing.T) {
	seed := maphash.MakeSeed()
	distinct := func(name string, n int, h func(i int) uint64) {
		t.Helper()
		seen := make(map[uint64]int, n)
		for i := range n {
			v := h(i)
			if j, ok := seen[v]; ok {
				t.Fatalf("%s: values %d and %d share hash %#x", name, j, i, v)
			}
			seen[v] = i
			if h(i) != v {
				t.Fatalf("%s: value %d hashed twice differently", name, i)
			}
		}
	}
	h8, h16, h32, h64 := keyHash[uint8](seed), keyHash[int16](seed), keyHash[int32](seed), keyHash[int](seed)
	distinct("uint8", 1<<8, func(i int) uint64 { return h8(uint8(i)) })
	distinct("int16", 1<<16, func(i int) uint64 { return h16(int16(i)) })
	distinct("int32", 1<<16, func(i int) uint64 { return h32(int32(i - 1<<15)) })
	distinct("int", 1<<16, func(i int) uint64 { return h64(i - 1<<15) })
}

// TestKeyHashSpreadsSequentialKeys: the trie reads its first level from
// the hash's low bits; sequential integer keys must fill every child about
// evenly, or one chain of children would take them all.
func TestKeyHashSpreadsSequentialKeys(t *testing.T) {
	h := keyHash[uint64](maphash.MakeSeed())
	const n = 1 << 14
	for d := uint(0); shiftAt(d) < 64; d++ {
		m := int(fanoutAt(d))
		count := make([]int, m)
		for i := range uint64(n) {
			count[index(h(i), d)]++
		}
		for c, got := range count {
			if got < n/m*7/10 || got > n/m*13/10 {
				t.Fatalf("level %d (bits from %d): child %d holds %d of %d sequential keys, want about %d", d, shiftAt(d), c, got, n, n/m)
			}
		}
	}
}

// TestKeyHashSeeded: two tries hash one key differently (their seeds
// differ), for every kind of key.
func TestKeyHashSeeded(t *testing.T) {
	a, b := maphash.MakeSeed(), maphash.MakeSeed()
	if keyHash[string](a)("k") == keyHash[string](b)("k") {
		t.Error("a string key hashed alike under two seeds")
	}
	if keyHash[int](a)(7) == keyHash[int](b)(7) {
		t.Error("an integer key hashed alike under two seeds")
	}
	if keyHash[point](a)(point{1, 2}) == keyHash[point](b)(point{1, 2}) {
		t.Error("a struct key hashed alike under two seeds")
	}
}

// TestKeyHashOtherTypes: any other comparable type hashes as
// maphash.Comparable.
func TestKeyHashOtherTypes(t *testing.T) {
	seed := maphash.MakeSeed()
	if got, want := keyHash[point](seed)(point{3, 4}), maphash.Comparable(seed, point{3, 4}); got != want {
		t.Errorf("struct key: %#x, want %#x", got, want)
	}
	if got, want := keyHash[[2]string](seed)([2]string{"a", "b"}), maphash.Comparable(seed, [2]string{"a", "b"}); got != want {
		t.Errorf("array key: %#x, want %#x", got, want)
	}
}

// TestKeyHashAvalanche: flipping any one bit of an integer key flips each
// bit of its hash with probability about one half (the strict avalanche
// criterion). A weaker mix keeps keys that differ only in their high
// bits (user ids shifted into place, say) in one child at the trie's low
// levels, where they would chain.
func TestKeyHashAvalanche(t *testing.T) {
	h := keyHash[uint64](maphash.MakeSeed())
	rng := rand.New(rand.NewPCG(1, 2))
	const samples = 4000
	var flips [64][64]int
	for range samples {
		x := rng.Uint64()
		hx := h(x)
		for in := range 64 {
			d := hx ^ h(x^1<<in)
			for out := range 64 {
				flips[in][out] += int(d >> out & 1)
			}
		}
	}
	worst, wi, wo := 0.0, 0, 0
	for in := range 64 {
		for out := range 64 {
			if dev := math.Abs(float64(flips[in][out])/samples - 0.5); dev > worst {
				worst, wi, wo = dev, in, out
			}
		}
	}
	if worst > 0.05 {
		t.Errorf("flipping input bit %d flips output bit %d in %d of %d keys: a bias of %.3f from one half (at most 0.05)", wi, wo, flips[wi][wo], samples, worst)
	}
}

// TestKeyHashSpreadsHighBits: keys that differ only in their high bits
// spread over every child at the first two levels of the trie.
func TestKeyHashSpreadsHighBits(t *testing.T) {
	h := keyHash[uint64](maphash.MakeSeed())
	for _, shift := range []int{32, 40, 48} {
		const n = 1 << 12 // about 256 a child, so half or twice that is 8 deviations off
		for d := range uint(2) {
			var count [wideFanout]int
			for i := range n {
				count[index(h(uint64(i)<<shift), d)]++
			}
			for c, got := range count {
				if want := n / wideFanout; got < want/2 || got > want*2 {
					t.Fatalf("keys i<<%d, level %d: child %d holds %d of %d keys, want about %d", shift, d, c, got, n, want)
				}
			}
		}
	}
}
