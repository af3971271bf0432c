#!/bin/bash
# bpf-agg's table of rows (ctxsw_agg.bpf.c): an array of slots, which the
# rows of dead threads give back at each read.  With the table shrunk by
# CTXMON_BPF_ROWS:
# - 96 slots for a command that runs some 480 short processes, a few dozen
#   alive at a time: the slots are reused, nothing is lost, and the counts
#   still match the kernel's (--check), with a row per process;
# - 8 slots for a command with 13 threads alive at once: the threads that
#   find no room lose events, and stat says so (lost > 0 in the JSON and
#   on stderr, the capture not complete, --check exit 3), never a silent
#   wrong count.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
"$CTXMON" stat --backend bpf-agg -o /dev/null -- true 2>/dev/null ||
	skip "bpf-agg does not load here"

# shellcheck disable=SC2016
churn='for i in $(seq 40); do "$1" 8 4; sleep 0.05; done'
rc=0
CTXMON_BPF_ROWS=96 "$CTXMON" stat --backend bpf-agg --check --json \
	-o "$T/reuse.json" -- sh -c "$churn" sh "$WL/forkstorm" \
	2>"$T/reuse.err" || rc=$?
echo "reuse: CTXMON_BPF_ROWS=96 ctxmon stat --backend bpf-agg --check -- 40 x forkstorm 8 4 -> exit $rc"
sed 's/^/  | /' "$T/reuse.err"
san_check reuse "$T/reuse.err"
[ "$rc" = 0 ] || fail "reuse: exit $rc"
res=$(python3 - "$T/reuse.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
c, k = j["capture"], j["kernel"]
print("lost=%d complete=%s match=%s processes=%d" % (
    c["lost"], c["complete"], k["match"], len(j["processes"])))
PY
)
echo "  $res"
case $res in
"lost=0 complete=True match=True processes="*) ;;
*) fail "reuse: $res" ;;
esac
n=${res##*processes=}
[ "$n" -gt 384 ] 2>/dev/null ||
	fail "reuse: $n processes, not enough to go round 96 slots 4 times"

rc=0
CTXMON_BPF_ROWS=8 "$CTXMON" stat --backend bpf-agg --check --json \
	-o "$T/full.json" -- sh -c \
	'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 0.3 & done; wait' \
	2>"$T/full.err" || rc=$?
echo "full: CTXMON_BPF_ROWS=8 ctxmon stat --backend bpf-agg --check -- 12 x sleep 0.3 & -> exit $rc"
sed 's/^/  | /' "$T/full.err"
san_check full "$T/full.err"
[ "$rc" = 3 ] || fail "full: exit $rc, not 3 (counts that cannot match)"
res=$(python3 - "$T/full.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
c = j["capture"]
print("lost=%d complete=%s percpu=%d" % (
    c["lost"], c["complete"], sum(c["lost_per_cpu"])))
PY
)
echo "  $res"
lost=${res#lost=}
lost=${lost%% *}
[ "$lost" -gt 0 ] 2>/dev/null || fail "full: no loss reported ($res)"
case $res in
*"complete=False percpu=$lost") ;;
*) fail "full: $res" ;;
esac
"$CTXMON" stat --backend bpf-agg -o "$T/full.txt" -- true 2>/dev/null
CTXMON_BPF_ROWS=8 "$CTXMON" stat --backend bpf-agg -o "$T/full.txt" -- sh -c \
	'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 0.2 & done; wait' \
	2>/dev/null
grep -q '^lost events: .*(numbers above may be incomplete)' "$T/full.txt" ||
	fail "full: no 'lost events' line in the text output"
grep -q 'CTXMON_BPF_ROWS' "$T/full.txt" ||
	fail "full: the text output does not say how to lose less"
finish
