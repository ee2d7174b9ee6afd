/*
 * tokenbucket.pml — the compare-and-swap commit loop of impl/tokenbucket
 * ((*Table).take) for one key, at small scale, for spin. Run it with
 * spec/check.sh; the action-to-Go mapping is spec/tokenbucket.md §9.
 *
 * Integer scaling. Time is the millisecond clock itself (now_ms = t). The
 * model's limits map to the float spec as capacity = CAP tokens,
 * refill_per_second = 1000 * RATE (RATE tokens per millisecond) and
 * cost = COST tokens; then the §3 formula
 *     min(tokens + (float64(elapsed) / 1000) * refill_per_second, capacity)
 * is exactly min(tokens + elapsed * RATE, CAP) in binary64: no rounding
 * occurs at these magnitudes. That was checked against model.Refill for
 * every integer tokens 0..CAP, last and now in 0..20, CAP 1..8 and RATE 1..4
 * (77,616 cases, no mismatch; see spec/tokenbucket.md §9). So every bucket
 * value here is an integer and the model's arithmetic is the spec's.
 *
 * Scale (raise with -D at `spin -a` time, see spec/check.sh):
 *   NT takers (default 3), each making K takes (default 2), one key.
 *   CAP = 2, RATE = 1, COST = 1; the clock runs from 0 to TMAX = 2.
 * Each take is TakeAt with a clock reading taken once when the take begins
 * and used on every attempt, so a reading is stale whenever the clock or
 * another take moved on in between. Take (which re-reads the clock per
 * attempt) commits what a TakeAt begun at its last attempt would, so its
 * behaviours are among these.
 *
 * The bucket word is (ver, tokens, last); ver names the immutable state the
 * Go word points at (0 = absent, nil), so a compare-and-swap compares ver.
 *
 * Properties (assertion names are printed by pan):
 *   T2  a take is refused only when, at the instant of the refusal, the
 *       bucket really holds less than COST for the taker's clock
 *   T3  the refill never exceeds the capacity
 *   T4  the stored timestamp never decreases
 *   T5  admitted cost <= CAP + RATE * (t_max - t_min), t_min the clock of the
 *       take that created the bucket, t_max the newest clock committed
 *   T11 lock-freedom: no run in which takes go on forever without one of
 *       them completing (non-progress cycles: pan -l, built with -DNP)
 *
 * Mutants, one -D flag each (names follow internal/fault):
 *   MUT_TS_REGRESS   tb-timestamp-regress: the stored timestamp is the
 *                    caller's clock even when older (the seed's behaviour)
 *   MUT_FAIL_CLOSED  tb-fail-closed: refuse after FAIL_AFTER (2) lost races
 *   MUT_PLAIN_STORE  tb-plain-store: commit with a store, not a CAS
 *   MUT_NO_CLAMP     tb-no-clamp: the refill is not clamped to capacity
 *   MUT_NO_RELOAD    a retry that compares against the word it loaded
 *                    first instead of reloading it: spins forever
 * NO_T4 compiles the T4 assertion out, to show that the bound T5 itself
 * refutes MUT_TS_REGRESS (over-admission).
 */

#ifndef NT
#define NT 3
#endif
#ifndef K
#define K 2
#endif
#ifndef CAP
#define CAP 2
#endif
#ifndef RATE
#define RATE 1
#endif
#ifndef COST
#define COST 1
#endif
#ifndef TMAX
#define TMAX 2
#endif
#define FAIL_AFTER 2   /* gives up after this many lost races (internal/mutants/patches/tb-fail-closed.patch gives up after 1) */

byte clk;              /* the shared millisecond clock, never decreasing */

/* the key's bucket word */
byte ver;              /* 0 = absent */
byte tok;
byte last;
byte vers;             /* versions issued */

/* ghosts for T5 */
byte admitted;         /* committed takes */
byte tmin;             /* clock of the take that created the bucket */
byte tmax;             /* newest clock of a committed take */

hidden byte T2_refused_only_when_tokens_missing = 1;
hidden byte T3_refill_within_capacity = 1;
hidden byte T4_timestamp_never_decreases = 1;
hidden byte T5_bound_never_exceeded = 1;

/* the §3 refill of word (v, t, l) at clock now, in the scaled integers */
#define ELAPSED(l, now) ((now) > (l) -> (now) - (l) : 0)
#ifdef MUT_NO_CLAMP
#define REFILL(v, t, l, now) ((v) == 0 -> CAP : (t) + ELAPSED(l, now) * RATE)
#else
#define REFILL(v, t, l, now) ((v) == 0 -> CAP : \
	((t) + ELAPSED(l, now) * RATE < CAP -> (t) + ELAPSED(l, now) * RATE : CAP))
#endif

/* the clock: each step is a millisecond */
active proctype Clock() {
	do
	:: clk < TMAX -> clk++
	:: else -> break
	od
}

/* the commit of one take: publish (nver, nt, nl) over (o_ver, o_last) and
 * check the bound on what has been admitted */
inline commit() {
	printf("taker %d: commit at now=%d: tokens %d -> %d, last %d -> %d\n", id, now, have, nt, o_last, nl);
	vers++;
	ver = vers; tok = nt; last = nl;
#ifndef NO_T4
	assert(T4_timestamp_never_decreases && (o_ver == 0 || nl >= o_last));
#endif
	admitted++;
	if
	:: o_ver == 0 -> tmin = now                 /* this take created the bucket */
	:: else -> skip
	fi;
	if
	:: now > tmax -> tmax = now
	:: else -> skip
	fi;
	printf("admitted %d by clocks %d..%d; the bound T5 allows %d\n", admitted, tmin, tmax, CAP + RATE * (tmax - tmin));
	assert(T5_bound_never_exceeded && admitted * COST <= CAP + RATE * (tmax - tmin))
}

/* (*Table).TakeAt(now, key, lim, COST), K times */
proctype Taker(byte id) {
	byte i, now, o_ver, o_tok, o_last, have, nt, nl, attempt;

	do
	:: i == K -> break
	:: else ->
		now = clk;                              /* the caller's clock reading */
		printf("taker %d: reads the clock: %d\n", id, now);
		attempt = 1;
		do
		:: atomic {                             /* old := c.state.Load() */
			o_ver = ver; o_tok = tok; o_last = last;
			have = REFILL(o_ver, o_tok, o_last, now);
			assert(T3_refill_within_capacity && have <= CAP);
			if
			:: have < COST ->                   /* refusal: writes nothing (T2) */
				printf("taker %d: refused at now=%d (has %d)\n", id, now, have);
				assert(T2_refused_only_when_tokens_missing &&
				       REFILL(ver, tok, last, now) < COST);
				goto done
			:: else -> skip
			fi;
			nt = have - COST;
			nl = now;
#ifndef MUT_TS_REGRESS
			if
			:: o_ver != 0 && o_last > now -> nl = o_last   /* T4: max(last, now) */
			:: else -> skip
			fi
#endif
		   }
#ifdef MUT_PLAIN_STORE
			atomic { commit(); goto done }      /* c.state.Store(next) */
#else
retry:
			atomic {                            /* c.state.CompareAndSwap(old, next) */
				if
				:: ver == o_ver -> commit(); goto done
				:: else ->                      /* lost the race */
					printf("taker %d: lost the race (attempt %d)\n", id, attempt)
				fi;
#ifdef MUT_FAIL_CLOSED
				if
				:: attempt >= FAIL_AFTER ->     /* gives up: a refusal */
					printf("taker %d: gives up after %d lost races\n", id, attempt);
					assert(T2_refused_only_when_tokens_missing &&
					       REFILL(ver, tok, last, now) < COST);
					goto done
				:: else -> skip
				fi;
#endif
				attempt++
			}
#ifdef MUT_NO_RELOAD
			goto retry                          /* compares against the first load again */
#endif
#endif
		od;
done:
progress:                                       /* a take completed */
		atomic { i++; now = 0; o_ver = 0; o_tok = 0; o_last = 0; have = 0; nt = 0; nl = 0; attempt = 0 }
	od
}

init {
	byte j = 1;
	atomic {
		do
		:: j > NT -> break
		:: else -> run Taker(j); j++
		od;
		j = 0
	}
}
