#!/bin/bash
# ctxmon experiment with runs that fail, hang past --timeout, and are
# killed: each is reported with its status and exit status, the good
# condition is still summarised, the hung command's whole tree is killed,
# and ctxmon exits 1, saying on stderr how many runs were not ok.  Then SIGINT in the middle of a long experiment:
# the summary of the runs done is printed and ctxmon exits 130.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
PY=/usr/bin/python3

# the hung command's sleep has a length of this test's own (31.PID s), so
# that looking for it by its command line finds no other test's process
HANG="sleep 31.$$"
rc=0
"$CTXMON" experiment -r 2 --timeout 1 --json -o "$T/f.json" \
	--condition ok="$WL/pingpong 100" \
	--condition fail="sh -c 'exit 3'" \
	--condition hang="sh -c '$HANG; true'" \
	--condition killed="sh -c 'kill -KILL \$\$'" 2>"$T/f.err" || rc=$?
echo "ctxmon experiment -r 2 --timeout 1 ok/fail/hang/killed -> exit $rc"
sed 's/^/  | /' "$T/f.err"
san_check experiment "$T/f.err"
[ "$rc" = 1 ] || fail "exit status $rc, want 1 (some runs not ok)"
# the report is in a file: stderr says why the exit status is 1
grep -q '^ctxmon experiment: 6 of 8 runs did not exit 0' "$T/f.err" ||
	fail "stderr does not count the 6 runs that were not ok"
left=$(pgrep -x -f "$HANG")
if [ -n "$left" ]; then
	fail "the hung command's child was left running"
	# shellcheck disable=SC2086 # the pids' words
	kill $left
fi
$PY - "$T/f.json" <<'PYEOF' || fail "run statuses"
import json, sys
j = json.load(open(sys.argv[1]))
# the hung shell's exit status is its own: its child is killed first
# (so that the shell reaps it), then the shell, which may exit first
want = {"ok": ("ok", 0), "fail": ("failed", 3), "hang": ("timeout", None),
        "killed": ("killed", 137)}
bad = 0
for r in j["runs"]:
    st, ex = want[r["condition"]]
    print("%-6s run %d: %s, exit status %d" % (r["condition"], r["run"], r["status"], r["exit_status"]))
    if r["status"] != st or (ex is not None and r["exit_status"] != ex):
        print("  want %s, exit status %s" % (st, ex)); bad += 1
    if not r["kernel"]["match"]:
        print("  kernel counters do not match"); bad += 1
if len(j["runs"]) != 8:
    print("%d runs, want 8" % len(j["runs"])); bad += 1
summ = {(s["condition"], s["metric"]): s for s in j["summary"]}
s = summ.get(("ok", "voluntary"))
if not s or s["all"]["n"] != 2:
    print("no summary of the ok condition"); bad += 1
if any(c != "ok" for c, m in summ):
    print("runs that were not ok entered the statistics"); bad += 1
sys.exit(1 if bad else 0)
PYEOF

# a backend that only counts cannot give the per-run metrics: one line
rc=0
"$CTXMON" experiment -r 1 --backend proc -- true >"$T/p.out" 2>"$T/p.err" || rc=$?
echo "ctxmon experiment --backend proc -> exit $rc: $(cat "$T/p.err")"
[ "$rc" = 1 ] && [ "$(wc -l <"$T/p.err")" = 1 ] && grep -q 'gives counts' "$T/p.err" ||
	fail "counting backend not refused in one line"
# a CPU list of no CPU this machine lets it run on: one line that says so
hi=$(($(nproc --all) + 8))
rc=0
"$CTXMON" experiment -r 1 --pin "$hi" -- true >"$T/c.out" 2>"$T/c.err" || rc=$?
echo "ctxmon experiment --pin $hi -> exit $rc: $(cat "$T/c.err")"
[ "$rc" = 1 ] && [ "$(wc -l <"$T/c.err")" = 1 ] &&
	grep -q "cannot pin to CPUs $hi: none of them is online and allowed" "$T/c.err" ||
	fail "--pin of no usable CPU not refused in one line"

# SIGINT: the runs done are summarised
"$CTXMON" experiment -r 500 --json -o "$T/i.json" -- "$WL/pingpong" 2000 2>"$T/i.err" &
pid=$!
BG_PIDS="$BG_PIDS $pid"
# SIGINT once a run has ended: the runs are one after another, so a
# second child of the experiment means the first is done (a fixed 3 s
# was a guess at how long the set-up takes on a loaded machine)
seen=" "
second_run() {
	local c
	for c in $(pgrep -P "$pid"); do
		case $seen in *" $c "*) ;; *) seen="$seen$c " ;; esac
	done
	[ "$(echo $seen | wc -w)" -ge 2 ]
}
wait_for 60 second_run || fail "experiment -r 500: no second run in 60 s"
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
echo "ctxmon experiment -r 500 -- pingpong 2000, SIGINT after its first run -> exit $rc"
sed 's/^/  | /' "$T/i.err"
san_check experiment "$T/i.err"
[ "$rc" = 130 ] || fail "exit status $rc after SIGINT, want 130"
$PY - "$T/i.json" <<'PYEOF' || fail "summary after SIGINT"
import json, sys
j = json.load(open(sys.argv[1]))
ok = [r for r in j["runs"] if r["status"] == "ok"]
other = [r["status"] for r in j["runs"] if r["status"] != "ok"]
print("interrupted: %s; %d runs ok, others: %s" % (j["interrupted"], len(ok), other))
s = [s for s in j["summary"] if s["metric"] == "voluntary"]
bad = not j["interrupted"] or not ok or len(ok) >= 500
bad = bad or any(st != "interrupted" for st in other)
bad = bad or not s or s[0]["all"]["n"] != len(ok)
if s:
    print("voluntary over the %d ok runs: mean %.1f" % (s[0]["all"]["n"], s[0]["all"]["mean"]))
sys.exit(1 if bad else 0)
PYEOF
finish
