#!/usr/bin/env bash
# spec/check.sh — verify the Promela models spec/credits.pml and
# spec/tokenbucket.pml with spin, and refute every mutant model.
#
# For each run it generates the verifier (spin -a), compiles it with gcc -O2
# (-O0 for a mutant, which stops at its first counterexample)
# (safety: -DSAFETY; liveness: acceptance cycles under weak fairness, pan -a
# -f; lock-freedom: non-progress cycles, -DNP and pan -l), runs it, and
# prints one table row: model, variant, property, states stored, result,
# search seconds. It exits non-zero when a real model has an error or an
# incomplete search, or when a mutant survives (or is refuted by a property
# other than the one it breaks). pan exits 0 even when it finds an error, so
# the verdict is read from its "errors: N" line and from the .trail file.
#
# Everything is built in a temporary directory; the repository is never
# written. The directories of refuted mutants are kept (model copy and
# .trail) so that the printed `spin -t -p …` command replays the
# counterexample; everything else is removed.
#
# Scale parameters (spin -D flags, see the header of each model):
#   CREDITS_SCALE       safety runs of credits.pml   (default "-DNC=2 -DROUNDS=2")
#   CREDITS_LIVE_SCALE  liveness runs of credits.pml (default "-DNC=2 -DROUNDS=1")
#   TB_SCALE            tokenbucket.pml runs         (default "-DNT=3 -DK=2")
#   SPIN_JOBS           runs in parallel (default 2)
#   SPIN_MEMLIM_MB      memory bound of each verifier (default 4096)
#   SPIN_ONLY           run only the rows whose line matches this extended
#                       regular expression (e.g. "tokenbucket" or "no-epoch")
# e.g. CREDITS_LIVE_SCALE="-DNC=2 -DROUNDS=2" spec/check.sh
#
# Needs spin and gcc; installs nothing (CI: apt-get update && apt-get
# install -y spin).
set -euo pipefail

for tool in spin gcc; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "spec/check.sh: $tool is not installed; on Debian/Ubuntu: apt-get update && apt-get install -y spin gcc" >&2
		exit 2
	fi
done

SPEC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CREDITS_SCALE=${CREDITS_SCALE:-"-DNC=2 -DROUNDS=2"}
CREDITS_LIVE_SCALE=${CREDITS_LIVE_SCALE:-"-DNC=2 -DROUNDS=1"}
TB_SCALE=${TB_SCALE:-"-DNT=3 -DK=2"}
JOBS=${SPIN_JOBS:-2}
MEMLIM=${SPIN_MEMLIM_MB:-4096}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tollgate-spin.XXXXXX")

# One run per line: id|model|variant|spin -D flags|mode|property|expect
#   mode:   safety | ltl:<claim> | np
#   expect: pass, or the property that must refute the mutant (an assertion
#           name, "acceptance cycle" or "non-progress cycle")
RUNS=$(cat <<EOF
01|credits|correct|$CREDITS_SCALE|safety|C1 C2 C3 C4 C7 C9 C10 (assertions)|pass
02|credits|correct|$CREDITS_LIVE_SCALE|ltl:c7_taken_and_finished|c7_taken_and_finished|pass
03|credits|correct|$CREDITS_LIVE_SCALE|ltl:c10_exited_slot_freed|c10_exited_slot_freed|pass
04|credits|correct|$CREDITS_LIVE_SCALE|ltl:c15_no_leak|c15_no_leak|pass
05|credits|cr-no-epoch-pin|$CREDITS_SCALE -DMUT_NO_EPOCH_PIN|safety|assertions|C3_stale_token_never_changes_later_reservation
06|credits|cr-two-write-enqueue|$CREDITS_SCALE -DMUT_TWO_WRITE_ENQUEUE|safety|assertions|C4_payload_iff_enqueued_or_processing
07|credits|cr-sweep-all|$CREDITS_SCALE -DMUT_SWEEP_ALL|safety|assertions|C10_sweep_frees_only_exited_reserved
08|credits|cr-sweep-all, no C10 check|$CREDITS_SCALE -DMUT_SWEEP_ALL -DNO_C10|safety|assertions|C7_no_payload_lost
09|credits|cr-class-off-by-one|$CREDITS_SCALE -DMUT_CLASS_OFF_BY_ONE|safety|assertions|C1_class_bounds
10|credits|cr-reserve-no-cas|$CREDITS_SCALE -DMUT_RESERVE_NO_CAS|safety|assertions|C2_reserve_claims_free_slot
11|credits|cr-finish-blind|$CREDITS_SCALE -DMUT_FINISH_BLIND|safety|assertions|C3_stale_token_never_changes_later_reservation
12|credits|cr-release-no-holder|$CREDITS_SCALE -DMUT_RELEASE_NO_HOLDER|safety|assertions|C9_release_only_by_its_holder
13|credits|one-scan exhausted (seed)|$CREDITS_SCALE -DMUT_ONE_SCAN|safety|assertions|C2_exhausted_only_when_all_in_use
14|credits|no sweeper|$CREDITS_LIVE_SCALE -DMUT_NO_SWEEP|ltl:c10_exited_slot_freed|c10_exited_slot_freed|acceptance cycle
15|credits|no sweeper|$CREDITS_LIVE_SCALE -DMUT_NO_SWEEP|ltl:c15_no_leak|c15_no_leak|acceptance cycle
16|credits|owner leaks expired rows|$CREDITS_LIVE_SCALE -DMUT_OWNER_LEAKS|ltl:c7_taken_and_finished|c7_taken_and_finished|acceptance cycle
17|tokenbucket|correct|$TB_SCALE|safety|T2 T3 T4 T5 (assertions)|pass
18|tokenbucket|correct|$TB_SCALE|np|T11 lock-free (non-progress)|pass
19|tokenbucket|tb-timestamp-regress|$TB_SCALE -DMUT_TS_REGRESS|safety|assertions|T4_timestamp_never_decreases
20|tokenbucket|tb-timestamp-regress, no T4 check|$TB_SCALE -DMUT_TS_REGRESS -DNO_T4|safety|assertions|T5_bound_never_exceeded
21|tokenbucket|tb-fail-closed|$TB_SCALE -DMUT_FAIL_CLOSED|safety|assertions|T2_refused_only_when_tokens_missing
22|tokenbucket|tb-plain-store|$TB_SCALE -DMUT_PLAIN_STORE|safety|assertions|T5_bound_never_exceeded
23|tokenbucket|tb-no-clamp|$TB_SCALE -DMUT_NO_CLAMP|safety|assertions|T3_refill_within_capacity
24|tokenbucket|no reload on retry|$TB_SCALE -DMUT_NO_RELOAD|np|T11 lock-free (non-progress)|non-progress cycle
EOF
)
if [ -n "${SPIN_ONLY:-}" ]; then
	RUNS=$(grep -E -- "$SPIN_ONLY" <<<"$RUNS" || true)
	if [ -z "$RUNS" ]; then
		echo "spec/check.sh: SPIN_ONLY=$SPIN_ONLY matches no run" >&2
		exit 2
	fi
fi

# run_one LINE: verify one model variant in its own directory and write
# the outcome to $WORK/<id>/result as
#   id|model|variant|property|states|verdict|seconds|ok(0/1)|replay
run_one() {
	local id model variant defs mode prop expect
	IFS='|' read -r id model variant defs mode prop expect <<<"$1"
	local dir="$WORK/$id"
	mkdir -p "$dir"
	cp "$SPEC/$model.pml" "$dir/"
	local cflags runflags
	case $mode in
	safety) cflags="-DSAFETY -DNOCLAIM"; runflags="" ;;
	ltl:*) cflags=""; runflags="-a -f -N ${mode#ltl:}" ;;
	np) cflags="-DNP -DNOCLAIM"; runflags="-l" ;;
	esac
	# A run that must verify searches the whole state space: gcc -O2, whose
	# compile (4 s of CPU) the search repays. A mutant's run stops at its
	# first counterexample, in well under a second: -O0 compiles it in a
	# sixth of the time, and the verdict is the same search's.
	local opt=-O2
	[ "$expect" = pass ] || opt=-O0
	local log="$dir/pan.out"
	# shellcheck disable=SC2086 # defs and flags are word lists
	(
		cd "$dir" &&
			spin -a $defs "$model.pml" >spin.out 2>&1 &&
			gcc -w $opt -DMEMLIM="$MEMLIM" $cflags -o pan pan.c >gcc.out 2>&1 &&
			./pan -m1000000 -w25 $runflags >"$log" 2>&1
	) || true
	local errors states secs found trail=""
	errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$log" 2>/dev/null | head -1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$log" 2>/dev/null | head -1)
	secs=$(sed -n 's/^pan: elapsed time \([0-9.e+]*\) seconds.*/\1/p' "$log" 2>/dev/null | head -1)
	found=$(sed -n '/^pan:1: /{s/^pan:1: //;p;q}' "$log" 2>/dev/null)
	case $found in
	"assertion violated"*) found=$(sed 's/^assertion violated (*\([A-Za-z0-9_]*\).*/\1/' <<<"$found") ;;
	"acceptance cycle"*) found="acceptance cycle" ;;
	"non-progress cycle"*) found="non-progress cycle" ;;
	esac
	[ -f "$dir/$model.pml.trail" ] && trail=yes
	local incomplete=""
	if grep -qE 'max search depth too small|reached -DMEMLIM|out of memory' "$log" 2>/dev/null; then
		incomplete=yes
	fi
	local verdict ok=0 replay=""
	if [ -z "$errors" ]; then
		verdict="NO RESULT (see $dir)"
	elif [ "$expect" = pass ]; then
		if [ "$errors" = 0 ] && [ -z "$trail" ] && [ -z "$incomplete" ]; then
			verdict="verified"; ok=1
		elif [ -n "$incomplete" ]; then
			verdict="INCOMPLETE search (see $dir)"
		else
			verdict="ERROR: $found"
		fi
	else
		if [ "$errors" != 0 ] && [ -n "$trail" ] && [ "$found" = "$expect" ]; then
			verdict="refuted: $found"; ok=1
			replay="cd $dir && spin -t -p $defs $model.pml"
		elif [ "$errors" != 0 ]; then
			verdict="REFUTED BY ${found:-?}, expected $expect"
		else
			verdict="SURVIVED"
		fi
	fi
	rm -f "$dir"/pan "$dir"/pan.[bchmpt] "$dir"/_spin_nvr.tmp
	if [ "$ok" = 1 ] && [ -z "$replay" ]; then
		rm -rf "$dir"
		mkdir -p "$dir"
	fi
	printf '%s|%s|%s|%s|%s|%s|%s|%s|%s\n' "$id" "$model" "$variant" "$prop" "${states:-?}" "$verdict" "${secs:-?}" "$ok" "$replay" >"$dir/result"
}

start=$(date +%s)
while IFS= read -r line; do
	[ -n "$line" ] || continue
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n || true
	done
	run_one "$line" &
done <<<"$RUNS"
wait

fmt='%-12s %-34s %-36s %10s  %-62s %8s\n'
# shellcheck disable=SC2059 # fmt is the table layout
printf "$fmt" model variant property states result seconds
failed=0
replays=()
while IFS= read -r line; do
	id=${line%%|*}
	IFS='|' read -r _ model variant prop states verdict secs ok replay <"$WORK/$id/result"
	# shellcheck disable=SC2059
	printf "$fmt" "$model" "$variant" "$prop" "$states" "$verdict" "$secs"
	[ "$ok" = 1 ] || failed=1
	[ -z "$replay" ] || replays+=("$model $variant: $replay")
	if [ "$ok" = 1 ] && [ -z "$replay" ]; then rm -rf "${WORK:?}/$id"; else rm -f "$WORK/$id/result"; fi
done <<<"$RUNS"

echo
echo "scale: credits safety $CREDITS_SCALE; credits liveness $CREDITS_LIVE_SCALE; tokenbucket $TB_SCALE"
if [ ${#replays[@]} -gt 0 ]; then
	echo "counterexample replays (trails kept in $WORK; without -p, spin -t prints only the model's printf story):"
	for r in "${replays[@]}"; do echo "  $r"; done
fi
rmdir "$WORK" 2>/dev/null || true
echo "spec/check.sh: $(($(date +%s) - start)) s wall"
if [ "$failed" != 0 ]; then
	echo "spec/check.sh: FAIL — a real model has an error or a mutant survived (rows not 'verified'/'refuted')" >&2
	exit 1
fi
echo "spec/check.sh: ok — both models verified, every mutant refuted"
