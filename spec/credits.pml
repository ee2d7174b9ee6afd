/*
 * credits.pml — the credit table of spec/credits.md at small scale, for spin.
 * Run it with spec/check.sh; the action-to-Go mapping is spec/credits.md §9.
 *
 * Every transition is one atomic compare-and-swap on one slot word, in the
 * order impl/credits does it: an operation loads the slot word (one step),
 * decides on its copy, then compare-and-swaps (a second step) and goes back
 * to the load when the word changed in between. Reserve scans its class one
 * word at a time and answers "exhausted" only after a second scan saw the
 * same rows; Sweep handles one row at a time. Local computation and reads
 * of words that never change once written (a row's holder, an epoch's
 * class) or only change once (a holder's exit flag, read by Sweep right
 * after its load; the epoch counter, drawn by Reserve right after the load
 * that saw a free word) are folded into the neighbouring step: moving them
 * next to it changes no outcome, only which epoch number a reservation gets.
 *
 * Scale (raise with -D at `spin -a` time, see spec/check.sh):
 *   NS = 3 slots: 1..2 general, 3 internal (a 2 + 1 split of 26 + 6).
 *   NC callers (default 2; 3 is beyond a CI budget, spec/promela.md). Caller
 *      1 reserves General ROUNDS times (default 2), so it can replay the
 *      token of its previous reservation; callers 2..NC reserve once,
 *      General, except caller NC, which picks the class.
 *   One owner and one sweeper, both running forever.
 *   Epochs are bounded by the number of Reserve calls (one draw per call).
 *
 * A slot word is the triple (epoch, state, payload). The Go word is a pointer
 * to an immutable row; comparing the triple is the same as comparing the
 * pointer because epochs are never reused and, within one epoch, a row only
 * moves forward (reserved, enqueued, processing), so no triple is ever
 * published twice.
 *
 * Callers: Owner.Call reduced to its table operations. After reserving, a
 * caller may exit (Holder.Exit) before enqueueing, release, enqueue (and then
 * stop waiting — reply or timeout, the table cannot tell — or exit), or be
 * declared exited while its enqueue is still in flight. Caller 1 may replay
 * the release of its previous token; caller 2 may release caller 1's current
 * token (code of another holder holding it). The owner may finish a token
 * twice.
 *
 * Properties. Safety assertions are named after the spec invariant IDs (the
 * name is the first operand of each assert, so pan prints it):
 *   C1  a row in slot n belongs to a reservation of n's class
 *   C2  reserve claims a free slot; "exhausted" only if at some instant
 *       during the call every slot of the class was in use
 *   C3  a token's compare-and-swap only replaces a row of the token's own
 *       epoch: a stale token never changes a later reservation
 *   C4  a row carries a payload iff it is enqueued or processing
 *   C7  each payload is taken at most once; a payload-bearing row is never
 *       freed or overwritten except by the owner's finish of its epoch
 *   C9  release frees only a reserved row, and only for its holder
 *   C10 sweep frees only reserved rows of exited holders
 * Liveness (LTL under weak fairness; pan -a -f -N name):
 *   c7_taken_and_finished   a slot holding a payload is eventually free: the
 *                           owner took and finished it (C7, C15)
 *   c10_exited_slot_freed   a slot held by an exited caller is eventually
 *                           free again, by sweep or by the owner (C10, C15)
 *   c15_no_leak             once every caller has stopped, eventually every
 *                           slot is free for good
 *
 * Mutants, one -D flag each (names follow internal/fault where it has one):
 *   MUT_NO_EPOCH_PIN       cr-no-epoch-pin: ops match slot and state, not epoch
 *   MUT_TWO_WRITE_ENQUEUE  cr-two-write-enqueue: the payload goes in with one
 *                          compare-and-swap, "enqueued" with a later store
 *   MUT_SWEEP_ALL          cr-sweep-all: sweep frees enqueued and processing
 *                          rows of exited holders
 *   MUT_CLASS_OFF_BY_ONE   cr-class-off-by-one: general reaches slot 3
 *   MUT_RESERVE_NO_CAS     cr-reserve-no-cas: reserve claims with a store
 *   MUT_FINISH_BLIND       cr-finish-blind: finish stores free unchecked
 *   MUT_RELEASE_NO_HOLDER  cr-release-no-holder: release checks the epoch,
 *                          not the holder
 *   MUT_ONE_SCAN           the seed's single pass: exhausted after one scan
 *   MUT_NO_SWEEP           nobody sweeps: exited reservations leak
 *   MUT_OWNER_LEAKS        the owner refuses an expired request and never
 *                          finishes its row
 * NO_C10 compiles the C10 assertion out, to show that C7 alone also refutes
 * MUT_SWEEP_ALL.
 */

#ifndef NC
#define NC 2
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif
#define NS 3
#define NG 2
#define MAXE (NC - 1 + ROUNDS)   /* Reserve calls, so the largest epoch */

/* row states (impl/credits.State; free is the nil word) */
#define FREE 0
#define RES  1
#define ENQ  2
#define PROC 3

/* classes (impl/credits.Class) */
#define GEN 1
#define INT 2

#define CLASS_OF(n) ((n) <= NG -> GEN : INT)
#define FIRST(c) ((c) == GEN -> 1 : NG + 1)
#ifdef MUT_CLASS_OFF_BY_ONE
#define LAST(c)  ((c) == GEN -> NG + 1 : NS)
#else
#define LAST(c)  ((c) == GEN -> NG : NS)                /* (*Table).slotRange */
#endif
/* the spec's class c has every slot in use */
#define CLASS_FULL(c) ((c) == GEN -> (s_st[1] != FREE && s_st[2] != FREE) : (s_st[3] != FREE))

/* the slot words, index 0 unused */
byte s_ep[NS + 1];
byte s_st[NS + 1];
byte s_pay[NS + 1];         /* payload id, 0 = none */

byte epochs;                /* (*Table).epochs: the last epoch drawn */
byte e_holder[MAXE + 1];    /* the holder field of epoch e's rows */
byte e_class[MAXE + 1];     /* the class epoch e was reserved for (ghost) */
bool exited[NC + 1];        /* (*Holder).dead */

/* ghosts */
byte taken[MAXE + 1];       /* takes that returned payload p */
byte reserving[NC + 1];     /* class of caller h's Reserve in progress, 0 = none */
bool allbusy[NC + 1];       /* every slot of that class was in use at an instant of it */
byte callers_done;
byte lent_n, lent_e;        /* caller 1's current token, as code of another holder may hold it */

/* property names: pan prints the failing assertion with its name */
hidden byte C1_class_bounds = 1;
hidden byte C2_reserve_claims_free_slot = 1;
hidden byte C2_exhausted_only_when_all_in_use = 1;
hidden byte C3_stale_token_never_changes_later_reservation = 1;
hidden byte C4_payload_iff_enqueued_or_processing = 1;
hidden byte C7_taken_at_most_once = 1;
hidden byte C7_no_payload_lost = 1;
hidden byte C9_release_frees_only_reserved = 1;
hidden byte C9_release_only_by_its_holder = 1;
hidden byte C10_sweep_frees_only_exited_reserved = 1;
hidden byte gi;             /* scratch index, used inside atomic sequences only */

#define SAME(n, e, s, p) (s_ep[n] == (e) && s_st[n] == (s) && s_pay[n] == (p))
/* one word as one number, for Reserve's seen[] (free is 0) */
#define WORD(n) (s_ep[n] * 8 + s_st[n] * 2 + (s_pay[n] != 0 -> 1 : 0))
#define SETW(n, e, s, p) s_ep[n] = (e); s_st[n] = (s); s_pay[n] = (p)

#ifdef MUT_NO_EPOCH_PIN
#define PINNED(oe, os, te) ((os) != FREE)
#else
#define PINNED(oe, os, te) ((os) != FREE && (oe) == (te))   /* (*Table).pinned */
#endif

#ifdef MUT_RELEASE_NO_HOLDER
#define RELEASER_OK(oe) true
#else
#define RELEASER_OK(oe) (e_holder[oe] == h)               /* old.holder == h */
#endif

/* a token's compare-and-swap replaces a row of its own epoch (C3) */
#define C3(oe, te) assert(C3_stale_token_never_changes_later_reservation && (oe) == (te))

/* Checked at the end of every step that writes a slot word: C1 and C4 on
 * every slot, and the C2 ghost of every caller inside Reserve. */
inline inv() {
	gi = 1;
	do
	:: gi > NS -> break
	:: else ->
		assert(C4_payload_iff_enqueued_or_processing &&
		       ((s_pay[gi] != 0) == (s_st[gi] == ENQ || s_st[gi] == PROC)));
		assert(C1_class_bounds && (s_st[gi] == FREE || e_class[s_ep[gi]] == CLASS_OF(gi)));
		gi++
	od;
	gi = 1;
	do
	:: gi > NC -> break
	:: else ->
		if
		:: reserving[gi] != 0 && CLASS_FULL(reserving[gi]) -> allbusy[gi] = 1
		:: else -> skip
		fi;
		gi++
	od;
	gi = 0
}

/* (*Table).Reserve(h, c). On return tok_n, tok_e hold the token; tok_n == 0
 * means Exhausted. */
inline reserve() {
	do                                                       /* for { */
	:: n = FIRST(c);
		do                                                   /* for n := first; n <= last; n++ */
		:: atomic {                                          /* seen[n-1] = w.Load() */
			if
			:: n > LAST(c) -> break
			:: else -> skip
			fi;
			seen[n] = WORD(n);
			if
			:: s_st[n] != FREE -> n++                        /* continue */
			:: else ->
				try = true;
				if
				:: claim == 0 ->                             /* claim: t.epochs.Add(1) */
					epochs++; claim = epochs; e_holder[claim] = h; e_class[claim] = c
				:: else -> skip
				fi
			fi
		   }
			if
			:: try ->
				try = false;
#ifdef MUT_RESERVE_NO_CAS
				atomic {                                     /* w.Store(claim) */
					printf("caller %d: reserve class %d -> slot %d epoch %d (store)\n", h, c, n, claim);
					assert(C2_reserve_claims_free_slot && s_st[n] == FREE);
					SETW(n, claim, RES, 0);
					tok_n = n; tok_e = claim; inv();
					break
				}
#else
				atomic {                                     /* w.CompareAndSwap(nil, claim) */
					if
					:: s_st[n] == FREE ->
						assert(C2_reserve_claims_free_slot && SAME(n, 0, FREE, 0));
						printf("caller %d: reserve class %d -> slot %d epoch %d\n", h, c, n, claim);
						SETW(n, claim, RES, 0);
						tok_n = n; tok_e = claim; inv();
						break
					:: else -> skip
					fi
				}
				atomic { seen[n] = WORD(n); n++ }            /* seen[n-1] = w.Load() */
#endif
			:: else -> skip
			fi
		od;
		if
		:: tok_n != 0 -> break
		:: else -> skip
		fi;
		same = true;
#ifndef MUT_ONE_SCAN
		n = FIRST(c);
		do                                                   /* exhausted */
		:: atomic {
			if
			:: n > LAST(c) -> break
			:: s_st[n] == FREE || WORD(n) != seen[n] -> same = false; break
			:: else -> n++
			fi
		   }
		od;
#endif
		if
		:: same ->                                           /* Exhausted */
			printf("caller %d: reserve class %d -> exhausted\n", h, c);
			assert(C2_exhausted_only_when_all_in_use && allbusy[h]);
			break
		:: else -> skip
		fi
	od;
	atomic {
		reserving[h] = 0; allbusy[h] = 0; claim = 0; n = 0; same = 0;
		seen[1] = 0; seen[2] = 0; seen[3] = 0
	}
}

/* (*Table).Release(h, tok) */
inline release(tn, te) {
	do
	:: atomic {                                              /* old := w.Load() */
		o_ep = s_ep[tn]; o_st = s_st[tn]; o_pay = s_pay[tn];
		if
		:: !(PINNED(o_ep, o_st, te) && o_st == RES && RELEASER_OK(o_ep)) ->
			o_ep = 0; o_st = 0; o_pay = 0; break           /* false */
		:: else -> skip
		fi
	   }
		atomic {                                             /* w.CompareAndSwap(old, nil) */
			if
			:: SAME(tn, o_ep, o_st, o_pay) ->
				printf("caller %d: release slot %d epoch %d frees row of epoch %d\n", h, tn, te, o_ep);
				C3(o_ep, te);
				assert(C9_release_frees_only_reserved && o_st == RES);
				assert(C9_release_only_by_its_holder && e_holder[o_ep] == h);
				assert(C7_no_payload_lost && o_pay == 0);
				SETW(tn, 0, FREE, 0);
				inv();
				o_ep = 0; o_st = 0; o_pay = 0; break           /* true */
			:: else -> skip
			fi
		}
	od
}

/* (*Table).EnqueueAt(now, h, tok, payload). The payload id is the token's
 * epoch (one request per reservation). enq is set when it answers OK. */
inline enqueue(tn, te) {
	do
	:: atomic {                                              /* old := w.Load() */
		o_ep = s_ep[tn]; o_st = s_st[tn]; o_pay = s_pay[tn];
		if
		:: !(PINNED(o_ep, o_st, te) && o_st == RES && e_holder[o_ep] == h) ->
			printf("caller %d: enqueue slot %d epoch %d -> lost\n", h, tn, te);
			o_ep = 0; o_st = 0; o_pay = 0; break           /* Lost */
		:: else -> skip
		fi
	   }
#ifdef MUT_TWO_WRITE_ENQUEUE
		atomic {                                             /* w.CompareAndSwap(old, staged) */
			if
			:: SAME(tn, o_ep, o_st, o_pay) ->
				printf("caller %d: enqueue slot %d epoch %d stages payload %d\n", h, tn, te, te);
				C3(o_ep, te);
				assert(C7_no_payload_lost && o_pay == 0);
				s_pay[tn] = te;
				inv(); enq = true
			:: else -> skip
			fi
		}
		if
		:: enq ->
			atomic {                                         /* w.Store(next) */
				printf("caller %d: enqueue slot %d epoch %d publishes enqueued\n", h, tn, te);
				C3(s_ep[tn], te);
				assert(C7_no_payload_lost && (s_pay[tn] == 0 || s_pay[tn] == te));
				SETW(tn, o_ep, ENQ, te);
				inv();
				o_ep = 0; o_st = 0; o_pay = 0; break
			}
		:: else -> skip
		fi
#else
		atomic {                                             /* w.CompareAndSwap(old, next) */
			if
			:: SAME(tn, o_ep, o_st, o_pay) ->
				printf("caller %d: enqueue slot %d epoch %d payload %d\n", h, tn, te, te);
				C3(o_ep, te);
				assert(C7_no_payload_lost && o_pay == 0);
				s_st[tn] = ENQ; s_pay[tn] = te;
				inv(); enq = true;
				o_ep = 0; o_st = 0; o_pay = 0; break           /* OK */
			:: else -> skip
			fi
		}
#endif
	od
}

/* (*Table).Finish(tok), called by the owner */
inline finish(tn, te) {
#ifdef MUT_FINISH_BLIND
	atomic {                                                 /* w.Store(nil) */
		if
		:: s_st[tn] != FREE ->
			printf("owner: finish slot %d epoch %d (blind) frees row of epoch %d\n", tn, te, s_ep[tn]);
			C3(s_ep[tn], te)
		:: else -> skip
		fi;
		SETW(tn, 0, FREE, 0);
		inv()
	}
#else
	do
	:: atomic {                                              /* old := w.Load() */
		o_ep = s_ep[tn]; o_st = s_st[tn]; o_pay = s_pay[tn];
		if
		:: !(PINNED(o_ep, o_st, te) && (o_st == PROC || o_st == ENQ)) ->
			o_ep = 0; o_st = 0; o_pay = 0; break           /* false */
		:: else -> skip
		fi
	   }
		atomic {                                             /* w.CompareAndSwap(old, nil) */
			if
			:: SAME(tn, o_ep, o_st, o_pay) ->
				printf("owner: finish slot %d epoch %d frees row of epoch %d\n", tn, te, o_ep);
				C3(o_ep, te);
				SETW(tn, 0, FREE, 0);
				inv();
				o_ep = 0; o_st = 0; o_pay = 0; break           /* true */
			:: else -> skip
			fi
		}
	od
#endif
}

proctype Caller(byte h; byte rounds) {
	byte c, r, n, claim, tok_n, tok_e, prev_n, prev_e, o_ep, o_st, o_pay;
	byte seen[NS + 1];
	bool same, enq, try;

	do
	:: atomic {
		if
		:: r == rounds -> break
		:: else -> skip
		fi;
		r++;
		if
		:: h == NC -> if :: c = GEN :: c = INT fi
		:: else -> c = GEN
		fi;
		reserving[h] = c;                                    /* ghost: Reserve begins */
		if
		:: CLASS_FULL(c) -> allbusy[h] = 1
		:: else -> skip
		fi
	   }
		reserve();
		if
		:: tok_n == 0 -> skip                                /* Exhausted */
		:: else ->
			if
			:: h == 1 -> atomic { lent_n = tok_n; lent_e = tok_e }
			:: else -> skip
			fi;
			if
			:: prev_n != 0 -> release(prev_n, prev_e)        /* a stale token replayed (C3) */
			:: h == 2 && lent_n != 0 ->
				release(lent_n, lent_e)                      /* another holder's token (C9) */
			:: true -> skip
			fi;
			if
			:: goto die                                      /* exits before enqueueing */
			:: release(tok_n, tok_e)                         /* no owner: gives the slot back */
			:: enqueue(tok_n, tok_e);
				if
				:: enq ->
					if
					:: enq = false                           /* reply or timeout: the row stays until finished */
					:: goto die                              /* exits after enqueueing */
					fi
				:: else -> skip                              /* Lost */
				fi
			:: exited[h] = true;                             /* declared exited mid-call */
				printf("caller %d: exited while its enqueue is in flight\n", h);
				enqueue(tok_n, tok_e);
				goto die
			fi;
			atomic { prev_n = tok_n; prev_e = tok_e }
		fi;
		atomic { tok_n = 0; tok_e = 0; c = 0 }
	od;
die:
	atomic {
		printf("caller %d: stops (exited)\n", h);
		exited[h] = true; callers_done++; enq = false
	}
}

/* Owner.drain, forever. Each round reads one enqueued row, as one entry of
 * (*Table).Enqueued does (a slot word read once), takes it, replies (no
 * table operation) and finishes it, and may finish the same token again, as
 * when a row is listed twice across two polls (C8). A poll that finds
 * nothing changes nothing: it is one idle step, which keeps the owner
 * running forever (an infinite run for the liveness properties). */
active proctype Owner() {
	byte n, e, got, o_ep, o_st, o_pay;

	do
	:: atomic {                                              /* one entry of Enqueued() */
		if
		:: s_st[1] == ENQ -> n = 1
		:: s_st[2] == ENQ -> n = 2
		:: s_st[3] == ENQ -> n = 3
		:: else -> goto idle                                 /* an empty poll */
		fi;
		e = s_ep[n]
	   }
		do                                                   /* (*Table).Take(tok) */
		:: atomic {                                          /* old := w.Load() */
			o_ep = s_ep[n]; o_st = s_st[n]; o_pay = s_pay[n];
			if
			:: !(PINNED(o_ep, o_st, e) && o_st == ENQ) ->
				o_ep = 0; o_st = 0; o_pay = 0; break       /* nothing to take */
			:: else -> skip
			fi
		   }
			atomic {                                         /* w.CompareAndSwap(old, next) */
				if
				:: SAME(n, o_ep, o_st, o_pay) ->
					printf("owner: take slot %d epoch %d -> payload %d\n", n, e, o_pay);
					C3(o_ep, e);
					s_st[n] = PROC;
					got = o_pay;
					taken[got]++;
					assert(C7_taken_at_most_once && taken[got] == 1);
					inv();
					o_ep = 0; o_st = 0; o_pay = 0; break
				:: else -> skip
				fi
			}
		od;
		if
		:: got != 0 ->
#ifdef MUT_OWNER_LEAKS
			if
			:: printf("owner: refuses expired payload %d, never finishes slot %d\n", got, n);
				goto next                                    /* deadline passed: refuses, never finishes */
			:: true -> skip
			fi;
#endif
			finish(n, e);
			if
			:: finish(n, e)                                  /* the same token finished again (C8) */
			:: true -> skip
			fi
		:: else -> skip
		fi;
#ifdef MUT_OWNER_LEAKS
next:
#endif
		atomic { n = 0; e = 0; got = 0 }
idle:
		skip
	od
}

/* (*Table).Sweep, forever. Each round is one iteration of Sweep's loop: load
 * a slot word, read its holder's liveness, and compare-and-swap a reserved
 * row of an exited holder to free. Loads of free words change nothing and
 * are left out: the sweeper waits for a slot in use. */
active proctype Sweeper() {
	byte n, o_ep, o_st, o_pay;

#ifdef MUT_NO_SWEEP
	skip
#else
end_sweep:                                                   /* idle: every slot free */
	do
	:: atomic {                                              /* old := w.Load(); old.holder.Alive() */
		if
		:: s_st[1] != FREE -> n = 1
		:: s_st[2] != FREE -> n = 2
		:: s_st[3] != FREE -> n = 3
		fi;
		o_ep = s_ep[n]; o_st = s_st[n]; o_pay = s_pay[n];
#ifdef MUT_SWEEP_ALL
		if
		:: exited[e_holder[o_ep]] -> skip
#else
		if
		:: exited[e_holder[o_ep]] && o_st == RES -> skip
#endif
		:: else -> n = 0; o_ep = 0; o_st = 0; o_pay = 0
		fi
	   }
		if
		:: n != 0 ->
			atomic {                                         /* w.CompareAndSwap(old, nil) */
				if
				:: SAME(n, o_ep, o_st, o_pay) ->
					printf("sweeper: frees slot %d epoch %d (state %d, payload %d)\n", n, o_ep, o_st, o_pay);
#ifndef NO_C10
					assert(C10_sweep_frees_only_exited_reserved &&
					       o_st == RES && exited[e_holder[o_ep]]);
#endif
					assert(C7_no_payload_lost && o_pay == 0);
					SETW(n, 0, FREE, 0);
					inv()
				:: else -> skip
				fi;
				n = 0; o_ep = 0; o_st = 0; o_pay = 0
			}
		:: else -> skip
		fi
	od
#endif
}

init {
	byte i = 1;
	atomic {
		do
		:: i > NC -> break
		:: else -> run Caller(i, (i == 1 -> ROUNDS : 1)); i++
		od;
		i = 0
	}
}

#define FREE_(n)   (s_st[n] == FREE)
#define HASPAY(n)  (s_pay[n] != 0)
#define EXHELD(n)  (s_st[n] != FREE && exited[e_holder[s_ep[n]]])

ltl c7_taken_and_finished {
	[] ((HASPAY(1) -> <> FREE_(1)) && (HASPAY(2) -> <> FREE_(2)) && (HASPAY(3) -> <> FREE_(3)))
}
ltl c10_exited_slot_freed {
	[] ((EXHELD(1) -> <> FREE_(1)) && (EXHELD(2) -> <> FREE_(2)) && (EXHELD(3) -> <> FREE_(3)))
}
ltl c15_no_leak {
	[] (callers_done == NC -> <> [] (FREE_(1) && FREE_(2) && FREE_(3)))
}
