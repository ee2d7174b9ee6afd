package fuzz

import (
	"encoding/binary"
	"math"

	"pgregory.net/rapid"
)

// chooser is where an action gets its choices from: rapid's draws (which
// shrink) or the bytes of a fuzz input. The actions are written once
// against it, so the rapid machines and the fuzz targets generate the same
// operations and run the same comparison.
type chooser interface {
	// Intn returns a value in [0, n).
	Intn(label string, n int) int
	// Int64Range returns a value in [lo, hi].
	Int64Range(label string, lo, hi int64) int64
	// Float01 returns a value in [0, 1].
	Float01(label string) float64
	// Bits returns 64 raw bits (hostile float64 patterns, extreme clocks).
	Bits(label string) uint64
}

// rapidChooser draws from a rapid.T.
type rapidChooser struct{ t *rapid.T }

func (c rapidChooser) Intn(label string, n int) int {
	return rapid.IntRange(0, n-1).Draw(c.t, label)
}

func (c rapidChooser) Int64Range(label string, lo, hi int64) int64 {
	return rapid.Int64Range(lo, hi).Draw(c.t, label)
}

func (c rapidChooser) Float01(label string) float64 {
	return rapid.Float64Range(0, 1).Draw(c.t, label)
}

func (c rapidChooser) Bits(label string) uint64 {
	return rapid.Uint64().Draw(c.t, label)
}

// byteChooser reads choices from a fuzz input. When the input runs out it
// answers zeros and reports Done, so every byte string decodes to some
// operation sequence and nothing is ever rejected.
type byteChooser struct {
	b []byte
}

// Done reports whether the input is used up.
func (c *byteChooser) Done() bool { return len(c.b) == 0 }

func (c *byteChooser) next(n int) []byte {
	var buf [8]byte
	k := copy(buf[:n], c.b)
	c.b = c.b[k:]
	return buf[:n]
}

func (c *byteChooser) Intn(_ string, n int) int {
	if n <= 1 {
		return 0
	}
	if n <= 256 {
		return int(c.next(1)[0]) % n
	}
	return int(binary.LittleEndian.Uint32(c.next(4)) % uint32(n))
}

func (c *byteChooser) Int64Range(_ string, lo, hi int64) int64 {
	span := uint64(hi) - uint64(lo)
	var v uint64
	switch {
	case span < 1<<8:
		v = uint64(c.next(1)[0])
	case span < 1<<16:
		v = uint64(binary.LittleEndian.Uint16(c.next(2)))
	case span < 1<<32:
		v = uint64(binary.LittleEndian.Uint32(c.next(4)))
	default:
		v = binary.LittleEndian.Uint64(c.next(8))
	}
	if span != math.MaxUint64 {
		v %= span + 1
	}
	return int64(uint64(lo) + v)
}

func (c *byteChooser) Float01(_ string) float64 {
	return float64(binary.LittleEndian.Uint16(c.next(2))) / math.MaxUint16
}

func (c *byteChooser) Bits(_ string) uint64 {
	return binary.LittleEndian.Uint64(c.next(8))
}
