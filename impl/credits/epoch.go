package credits

// The epoch a token carries is its slot's generation and the slot,
// generation<<SlotBits | slot-1: unique across the table's slots, and never
// handed out twice, since a slot's generation only rises (C3). It is opaque
// to callers. It is exported here, once, for the tables of the other
// backends (impl/etcd/credits, impl/redis/credits), which hand out the same
// epochs.
const (
	// SlotBits is how many low bits of an epoch name its slot.
	SlotBits = slotBits
	// MaxGen is the largest generation a slot hands out, so that every
	// epoch is below 1<<63 (C3). A backend whose server cannot hold such a
	// number exactly caps it lower (impl/redis/credits: 2^48 − 1).
	MaxGen = maxGen
)

// Epoch is the epoch of generation gen of slot (1..Slots) (C3).
func Epoch(slot int, gen uint64) uint64 { return epochOf(slot, gen) }

// Generation is the generation epoch carries, and whether epoch names slot
// (1..Slots) at all: a token whose epoch names another slot pins nothing
// (C3). It does not bound the generation: a backend compares it with its
// own cap.
func Generation(slot int, epoch uint64) (gen uint64, ok bool) {
	return epoch >> slotBits, epoch&slotMask == uint64(slot-1)
}
