package seam

// A Pair is a 128-bit shared word: two uint64 halves, lo and hi, that change
// together. Load, Store and CompareAndSwap act on both halves in one atomic
// step; LoadLo and CompareAndSwapLo act on lo alone, and hi is neither
// compared nor changed by them. The zero Pair holds (0, 0).
//
// Every operation of a Pair is sequentially consistent with every other and
// with the operations of sync/atomic, in the terms of the Go memory model: if
// the effect of an operation A is observed by an operation B, A is
// synchronized before B, and all of them behave as though executed in one
// sequentially consistent order. A CompareAndSwap that fails acts as a load
// of the pair.
//
// A Pair must not be copied after first use (go vet reports copies). Its
// halves are uint64s, not pointers: the garbage collector does not see what
// they hold.
//
// # Implementations
//
// Which one is built depends on GOARCH and on the purego build tag.
//
// amd64. The storage is three words, and the pair is the two of them that are
// 16-byte aligned; Go aligns a struct field to 8 bytes only, so the choice is
// made from the Pair's address at every operation. That is why a Pair must
// stay where it was first used: a Pair that other goroutines reach lives in
// the heap (it escapes to it), and Go's heap does not move objects. (A Pair
// that stays on its goroutine's stack moves when the runtime copies the
// stack, to the same distance from the top of the new one; stacks are 2
// KiB-aligned and their sizes multiples of 2 KiB, so the move keeps the
// address modulo 16, and TestPairOnStack checks that it works.) A copy of a
// Pair at an address of the other parity would read the wrong words, which
// is one more reason not to copy one. Each 128-bit operation is a call of a
// small assembly function, into which the method inlines.
//
//   - Store and CompareAndSwap are LOCK CMPXCHG16B (Store retries until the
//     value it compared against was current). Both write the cache line,
//     CompareAndSwap even when it fails: CMPXCHG16B always performs a write
//     cycle. A caller that expects to be refused, and must stay write-free
//     when it is, compares against a Load first.
//   - Load, when the CPU enumerates AVX, is one VMOVDQA load of the aligned
//     16 bytes. Intel guarantees it atomic ("Processors that enumerate
//     support for Intel AVX ... guarantee that the 16-byte memory operations
//     performed by the following instructions will always be carried out
//     atomically: MOVAPD, MOVAPS, and MOVDQA; VMOVAPD, VMOVAPS, and VMOVDQA
//     when encoded with VEX.128 ...", Intel SDM vol. 3A §9.1.1), and so does
//     AMD for cacheable memory (processors that report AVX "extend the
//     atomicity for cacheable, naturally-aligned single loads or stores from a
//     quadword to a double quadword", AMD64 APM vol. 2 §7.3.2); Go's heap and
//     stacks are write-back memory. It is a plain load: it shares the line
//     and never writes it, so readers do not slow one another or the writers
//     down more than an atomic.Uint64 Load would. Without AVX, Load is a
//     LOCK CMPXCHG16B that swaps (0, 0) for (0, 0), which writes the line:
//     concurrent Loads then contend like writes.
//   - LoadLo and CompareAndSwapLo are sync/atomic's LoadUint64 (a MOVQ, no
//     write) and CompareAndSwapUint64 (LOCK CMPXCHGQ, which writes the line
//     even when it fails) on the lo word, inlined.
//
// A CPU without CMPXCHG16B (only the earliest x86-64 parts) panics on the
// first operation that needs it, saying to build with -tags purego.
//
// Ordering on amd64: the hardware order is TSO, whose one relaxation is that
// a load may pass an earlier store still in the store buffer. Every write of
// a Pair is a LOCK-prefixed instruction, which drains the store buffer, as are
// sync/atomic's stores (XCHG) and read-modify-writes; the loads (VMOVDQA,
// MOVQ) are plain loads exactly as sync/atomic's Load is. So the argument
// that makes sync/atomic sequentially consistent on amd64 covers Pair too.
// LoadLo and CompareAndSwapLo access 8 of the 16 bytes the pair operations
// access. Intel advises identical operand sizes for semaphores (SDM vol. 3A
// §9.1.2.2), the concern being bus locks; the pair is aligned and so within
// one cache line of write-back memory, where a locked operation locks the line
// in the cache (§9.1.4), and operations on one line are serialized by the
// coherence protocol whatever their sizes.
//
// arm64. The same three-word storage and choice of the aligned pair (the
// exclusive pair instructions fault on an address not aligned to 16).
//
//   - CompareAndSwap is LDAXP, a compare of both halves, and STLXP of the new
//     value, retried while the store-exclusive fails. When the compare fails
//     it returns without storing: a refused CompareAndSwap does not write.
//   - Store is LDAXP and STLXP of the new value, retried; it writes.
//   - Load is LDAXP and STLXP of the same value, retried: ARMv8.0 reads a
//     pair single-copy atomically only when the store-exclusive that follows
//     succeeds, so Load writes the line (takes it exclusive) and concurrent
//     Loads contend like writes. (FEAT_LSE2's single-copy-atomic LDP is not
//     used, nor FEAT_LSE's CASPAL, of which the Go assembler has only the
//     unordered form CASP.)
//   - LoadLo and CompareAndSwapLo are sync/atomic's on the lo word (LDAR; CASAL
//     or an LDAXR/STLXR loop), inlined.
//
// Ordering on arm64: LDAXP is a load-acquire and STLXP a store-release, of the
// same strength (RCsc) as the LDAR/STLR and the LSE "AL" forms sync/atomic
// uses; an acquire is never satisfied before an earlier release of the same
// thread is visible, which is what makes those sequentially consistent. A
// write of lo by CompareAndSwapLo clears the exclusive monitors of the other
// cores on the granule, so a pair operation racing with it retries.
//
// Everywhere else, and with -tags purego on every GOARCH, the pair is an
// immutable [2]uint64 box behind an atomic.Pointer (nil is (0, 0)). Load and
// LoadLo are one pointer load and do not write; Store is one pointer store;
// CompareAndSwap and CompareAndSwapLo load the pointer, compare the boxed
// halves, and compare-and-swap the pointer for a fresh box, retrying while
// the pointer changed but the boxed values still match (another write put
// equal values in a new box), and failing without a write when they do not
// match. It is lock-free (a retry means another write succeeded) and
// sequentially consistent because atomic.Pointer is, but it allocates a
// 16-byte box on every write, and a Load costs a pointer load and the read of
// the box it points to.
//
// With -race, the race detector does not see the assembly, so the operations
// of the amd64 and arm64 implementations tell it of their synchronization: a
// release before every write and an acquire after every operation, on the
// address of the lo word, which is where sync/atomic's operations on lo (and
// so LoadLo and CompareAndSwapLo) synchronize too. The release of a
// CompareAndSwap is made before it is known to succeed, so a failed one may
// hide a race; no race is reported that is not there.
//
// The methods are in pair_words.go (amd64, arm64) and pair_purego.go.
//
// A package whose generic code uses a Pair declares a function that is
// never called, exportPairInline, calling each of Pair's methods (impl/credits
// and impl/tokenbucket have one each). Go inlines the callees of a generic
// method into the package that instantiates it only when the generic's own
// package's export data carries their inline bodies, and it carries them for
// the callees of its own non-generic functions. Without that function every
// Pair operation of the generic code would stay a call in every user's
// instantiation (measured: five calls per credits Reserve); with it they
// compile to the instructions themselves. scripts/seam-check.sh fails if they
// do not.
type Pair struct {
	_ noCopy
	w pairWords
}

// noCopy makes go vet's copylocks check report a copied Pair.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
