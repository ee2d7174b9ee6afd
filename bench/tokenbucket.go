package bench

import (
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"github.com/tollgate/tollgate/impl/tokenbucket"
	"github.com/tollgate/tollgate/model"
	"go.uber.org/ratelimit"
	"golang.org/x/time/rate"
)

// Bucketer is the one interface every token bucket design is measured
// through: take one token from key's bucket at nowMs and report whether it
// was admitted. Each design is built for one set of limits. boxed is key
// already converted to an interface, made once before timing, for designs
// keyed by a sync.Map, so no design pays for boxing inside the timed loop.
type Bucketer interface {
	TakeAt(nowMs int64, key uint64, boxed any) bool
}

// TBDesign names a token bucket design and builds it.
type TBDesign struct {
	Name string
	// New builds an empty instance for lim. keys is the number of distinct
	// keys the run will use; only the single-limiter design needs it.
	New func(lim model.Limits, keys int) Bucketer
	// AdmitOnly marks a design that cannot refuse (it paces instead), so
	// it is measured only on the admitting workload.
	AdmitOnly bool
	// RefuseOnly marks a design that only refuses (the refusal's floor),
	// measured only on the refusing workload.
	RefuseOnly bool
}

// Design names, as they appear in results.
const (
	Tollgate    = "tollgate"
	MutexMap    = "mutex-per-bucket"
	ShardedMap  = "sharded-mutex"
	XRate       = "x-time-rate"
	XRateSingle = "x-time-rate-single"
	UberRL      = "uber-ratelimit"
)

// TBDesigns lists the token bucket designs, tollgate first.
func TBDesigns() []TBDesign {
	return []TBDesign{
		{Name: Tollgate, New: newTollgateTB},
		{Name: MutexMap, New: newMutexMap},
		{Name: ShardedMap, New: newSharded},
		{Name: XRate, New: newXRate},
		{Name: XRateSingle, New: newXRateSingle},
		{Name: UberRL, New: newUber, AdmitOnly: true},
	}
}

// tollgateTB is impl/tokenbucket with uint64 keys.
type tollgateTB struct {
	t   *tokenbucket.Table[uint64]
	lim tokenbucket.Limits
}

func newTollgateTB(lim model.Limits, _ int) Bucketer {
	return &tollgateTB{t: tokenbucket.New[uint64](), lim: tokenbucket.Limits(lim)}
}

func (d *tollgateTB) TakeAt(nowMs int64, key uint64, _ any) bool {
	_, ok, err := d.t.TakeAt(nowMs, key, d.lim, 1)
	if err != nil {
		panic(fmt.Sprintf("bench: tollgate rejected valid limits: %v", err))
	}
	return ok
}

// mutexBucket is one bucket of the mutex-per-bucket design.
type mutexBucket struct {
	mu sync.Mutex
	b  model.Bucket
}

// mutexMap finds a key's bucket in a sync.Map and takes under the bucket's
// own mutex, applying model.Take (the spec's rule) while holding it.
type mutexMap struct {
	m   sync.Map // uint64 → *mutexBucket
	lim model.Limits
}

func newMutexMap(lim model.Limits, _ int) Bucketer { return &mutexMap{lim: lim} }

func (d *mutexMap) TakeAt(nowMs int64, _ uint64, boxed any) bool {
	v, ok := d.m.Load(boxed)
	if !ok {
		v, _ = d.m.LoadOrStore(boxed, new(mutexBucket))
	}
	mb := v.(*mutexBucket)
	mb.mu.Lock()
	next, ok, _ := model.Take(mb.b, d.lim, 1, nowMs)
	mb.b = next
	mb.mu.Unlock()
	return ok
}

// shards is the shard count of the sharded-mutex design.
const shards = 64

// sharded keeps buckets in 64 plain maps, each behind its own mutex; a take
// holds its shard's mutex for the lookup and model.Take together.
type sharded struct {
	seed   maphash.Seed
	lim    model.Limits
	shards [shards]struct {
		mu sync.Mutex
		m  map[uint64]model.Bucket
		_  [40]byte // keep shards on separate cache lines
	}
}

func newSharded(lim model.Limits, _ int) Bucketer {
	d := &sharded{seed: maphash.MakeSeed(), lim: lim}
	for i := range d.shards {
		d.shards[i].m = make(map[uint64]model.Bucket)
	}
	return d
}

func (d *sharded) TakeAt(nowMs int64, key uint64, _ any) bool {
	s := &d.shards[maphash.Comparable(d.seed, key)%shards]
	s.mu.Lock()
	next, ok, _ := model.Take(s.m[key], d.lim, 1, nowMs)
	if ok {
		s.m[key] = next
	}
	s.mu.Unlock()
	return ok
}

// epoch is the time origin the time-based peers see: nowMs is added to it.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// xrate is golang.org/x/time/rate with one Limiter per key in a sync.Map,
// taking with AllowN at an injected time. Its burst is an int (capacity is
// truncated) and its clock has nanosecond resolution; a time older than
// the limiter's last one is treated as no elapsed time.
type xrate struct {
	m   sync.Map // uint64 → *rate.Limiter
	lim model.Limits
}

func newXRate(lim model.Limits, _ int) Bucketer { return &xrate{lim: lim} }

func (d *xrate) TakeAt(nowMs int64, _ uint64, boxed any) bool {
	v, ok := d.m.Load(boxed)
	if !ok {
		v, _ = d.m.LoadOrStore(boxed, rate.NewLimiter(rate.Limit(d.lim.RefillPerSecond), int(d.lim.Capacity)))
	}
	return v.(*rate.Limiter).AllowN(epoch.Add(time.Duration(nowMs)*time.Millisecond), 1)
}

// xrateSingle is one bare x/time/rate Limiter with no key lookup at all:
// every key shares it, so it is the same workload only with one key. It is
// the baseline of the single-goroutine Take target.
type xrateSingle struct{ l *rate.Limiter }

func newXRateSingle(lim model.Limits, _ int) Bucketer {
	return &xrateSingle{rate.NewLimiter(rate.Limit(lim.RefillPerSecond), int(lim.Capacity))}
}

func (d *xrateSingle) TakeAt(nowMs int64, _ uint64, _ any) bool {
	return d.l.AllowN(epoch.Add(time.Duration(nowMs)*time.Millisecond), 1)
}

// uber is go.uber.org/ratelimit (its int64 compare-and-swap limiter) with
// one limiter per key. It is a pacer, not a bucket: Take never refuses, it
// sleeps until the caller's slot comes, and it has no burst beyond its
// slack. Here its clock is fixed and Sleep returns at once, so a Take
// measures only its state update, counted as an admission.
type uber struct {
	m    sync.Map // uint64 → ratelimit.Limiter
	rate int
}

// frozenClock is a ratelimit.Clock whose time never moves and whose Sleep
// does not sleep.
type frozenClock struct{}

func (frozenClock) Now() time.Time        { return epoch }
func (frozenClock) Sleep(_ time.Duration) {}

func newUber(lim model.Limits, _ int) Bucketer {
	return &uber{rate: max(1, int(lim.RefillPerSecond))}
}

func (d *uber) TakeAt(_ int64, _ uint64, boxed any) bool {
	v, ok := d.m.Load(boxed)
	if !ok {
		v, _ = d.m.LoadOrStore(boxed, ratelimit.New(d.rate, ratelimit.WithClock(frozenClock{})))
	}
	v.(ratelimit.Limiter).Take()
	return true
}
