package limiters

// Classify is the verdict's reading for a human: for a violation or an
// error, whether it is a library bug (with the upstream issue where one is
// known), a behaviour the library's own tests make intended, or an input
// outside what the library accepts. Empty when nothing is known to say.
// The readings come from the library's source at the versions named; the
// verdicts themselves come only from the runs.
func Classify(r Result) string {
	if r.Verdict != Violated && r.Verdict != Failed {
		return ""
	}
	switch r.Library + " " + r.Workload + " " + r.Prop {
	case "golang.org/x/time stale-alternate L1":
		return "a stale reading is stored as the limiter's time and the interval is credited again (golang/go#56287); upstream's TestLimiterJumpBackwards asserts it, the package doc says nothing: upstream-intended, undocumented"
	case "golang.org/x/time stale-refused L1":
		return "library bug: a refused call stored its stale reading, moving the limiter's time back (v0.3.0 made a refusal change nothing)"
	case "golang.org/x/time tiny-rate L1":
		return "library bug: the wait overflows time.Duration to a negative value and the call is allowed (golang/go#71154; v0.10.0 caps it)"
	case "golang.org/x/time tiny-rate L2", "golang.org/x/time zero-time L2", "golang.org/x/time before-zero L2":
		return "library bug against its doc (\"initially full\"): NewLimiter started empty and was filled by the time since time.Time{} (saturating at 292 years), too little at a tiny rate or at readings near year 1; v0.7.0 starts it full"
	case "golang.org/x/time contended L1", "golang.org/x/time contended-allow L1", "golang.org/x/time contended-lin L1":
		return "the stale-time mechanism on the real clock: the reading is taken before the lock, an older reading commits after a newer one and moves the time back (golang/go#71360). A second opinion whose verdict changes from run to run; the deterministic verdict is the explorer's (explore/results/targets.md, allow-stale and reserve-stale: every version, at 1 preemption, every seed)"
	case "go.uber.org/ratelimit idle-burst L3", "go.uber.org/ratelimit idle-just-past-slack L3", "go.uber.org/ratelimit contended-idle-burst L3",
		"go.uber.org/ratelimit contended L3":
		return "library bug: after an idle period longer than the slack every Take returns at once (uber-go/ratelimit #119/#106, fixed by #124 in v0.3.1)"
	case "go.uber.org/ratelimit unix-epoch-frozen L3":
		return "library bug at one instant: the int64 state 0 also means \"no Take yet\", so on a clock reading exactly the Unix epoch (where mock clocks start) no Take is ever paced; not reported upstream as far as we know; a real clock never reads it"
	case "go.uber.org/ratelimit zero-time L3":
		return "input outside the library's domain: v0.3 keeps time as UnixNano, which the time package leaves undefined before 1678; not a bug"
	case "go.uber.org/ratelimit zero-rate L3":
		return "New(0) divides by zero; the doc does not say the rate must be positive"
	case "github.com/go-redis/redis_rate/v10 zero-rate L1", "github.com/go-redis/redis_rate/v10 zero-rate L2":
		return "rate 0 makes the script fail (an error, nothing admitted)"
	}
	return ""
}
