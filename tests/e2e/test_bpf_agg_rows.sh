#!/bin/bash
# bpf-agg's table of rows (ctxsw_agg.bpf.c): an array of slots, which the
# rows of dead threads give back at each read.  With the table shrunk by
# CTXMON_BPF_ROWS:
# - 96 slots for a command that runs some 480 short processes, a few dozen
#   alive at a time: the slots are reused, nothing is lost, and the counts
#   still match the kernel's (--check, and kcount's wait4() rusage of the
#   command's tree), with a row per process;
# - 8 slots for a command with 13 threads alive at once: the threads that
#   find no room lose events, and stat says so (lost > 0 in the JSON and
#   on stderr, the capture not complete, --check exit 3), never a silent
#   wrong count.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
"$CTXMON" stat --backend bpf-agg -o /dev/null -- true 2>/dev/null ||
	skip "bpf-agg does not load here"

# agg NAME ROWS EXPECTED_RC CMD...: stat --check --json of CMD with a
# table of ROWS rows; sets res to "lost= complete= match= processes=
# percpu=".
agg() {
	local name=$1 rows=$2 want=$3 rc=0
	shift 3
	CTXMON_BPF_ROWS=$rows "$CTXMON" stat --backend bpf-agg --check --json \
		-o "$T/$name.json" -- "$@" 2>"$T/$name.err" || rc=$?
	echo "$name: CTXMON_BPF_ROWS=$rows ctxmon stat --backend bpf-agg --check -- $* -> exit $rc"
	sed 's/^/  | /' "$T/$name.err"
	san_check "$name" "$T/$name.err"
	[ "$rc" = "$want" ] || fail "$name: exit $rc, not $want"
	res=$(python3 - "$T/$name.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
c, k = j["capture"], j["kernel"]
print("lost=%d complete=%s match=%s processes=%d percpu=%d" % (
    c["lost"], c["complete"], k["match"], len(j["processes"]),
    sum(c["lost_per_cpu"])))
PY
)
	echo "  $res"
}

# Under kcount, so the counts are held against the kernel's own (its
# wait4() rusage of the shell, kcount_judge) and not only stat's --check.
# shellcheck disable=SC2016
agg reuse 96 0 "$WL/kcount" sh -c 'for i in $(seq 40); do "$1" 8 4; sleep 0.05; done' \
	sh "$WL/forkstorm"
kcount_judge reuse "$T/reuse.json" "$T/reuse.err" 0 -
case $res in
"lost=0 complete=True match=True processes="*) ;;
*) fail "reuse: $res" ;;
esac
n=${res##*processes=}
n=${n%% *}
[ "$n" -gt 384 ] 2>/dev/null ||
	fail "reuse: $n processes, not enough to go round 96 slots 4 times"

# exit 3: counts that cannot match
agg full 8 3 sh -c \
	'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 0.3 & done; wait'
lost=${res#lost=}
lost=${lost%% *}
[ "$lost" -gt 0 ] 2>/dev/null || fail "full: no loss reported ($res)"
case $res in
*"complete=False match=False "*"percpu=$lost") ;;
*) fail "full: $res" ;;
esac
# the text form: stat exits with the command's status (0: no --check),
# and its stderr is read for sanitizer reports like every other run's
rc=0
CTXMON_BPF_ROWS=8 "$CTXMON" stat --backend bpf-agg -o "$T/full.txt" -- sh -c \
	'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 0.2 & done; wait' \
	2>"$T/fulltxt.err" || rc=$?
san_check "full (text)" "$T/fulltxt.err"
[ "$rc" = 0 ] || fail "full (text): stat exited $rc, the command 0: $(tail -n 1 "$T/fulltxt.err")"
grep -q '^lost events: .*(numbers above may be incomplete)' "$T/full.txt" ||
	fail "full: no 'lost events' line in the text output"
grep -q 'CTXMON_BPF_ROWS' "$T/full.txt" ||
	fail "full: the text output does not say how to lose less"
finish
