#!/bin/bash
# tier: both (make test: bpf-agg and perf; make check: the five exact backends)
# Commands whose descendants are orphaned (issue 13, defects 1 and 6).
#
# A process whose parent dies first is reparented to init, which reaps it:
# its counters never reach the command's rusage.  For a shell script that
# backgrounds children from a subshell, a double-forking daemon and a
# `setsid -f` child, run under GNU time:
#
#   ctxmon stat --check --json -o out.json -- /usr/bin/time -v CMD
#
# and check, with every backend that claims exact counts, that
# - the orphans' rows are there and marked "orphaned" (they run a copy of
#   sleep named orphsleep, so the test knows them), and no other row is;
# - the rows of GNU time's child and its descendants that are not orphaned
#   sum, under the exit rule (docs/accounting.md), to GNU time's own
#   "Voluntary/Involuntary context switches" of CMD;
# - kernel.match is true and stat exits with the command's status.
# With the BPF backends also two cases no tracepoint shows, which they
# read from the task structs at exit: zombies whose parent exits without
# reaping them (init reaps them) and the children of a parent that ignores
# SIGCHLD (released unreaped).
# Then --check: the verdict line is on stderr with --json -o, --check
# without a command is a usage error (2), and a mismatch exits 3 (the
# SIGCHLD case under a tracepoint backend, which cannot see it, so it must
# mismatch).
. "$(dirname "$0")/lib.sh"
skip_unless_capture
[ -x /usr/bin/time ] || skip "GNU time not installed (Debian package time)"
command -v setsid >/dev/null || skip "no setsid (util-linux)"

cp "$(command -v sleep)" "$T/orphsleep"
O=$T/orphsleep

# gnutime_check NAME BACKEND NORPHANS CMD...: one run.
gnutime_check() {
	local name=$1 b=$2 norph=$3 rc res
	shift 3
	rc=0
	"$CTXMON" stat --backend "$b" --check --json -o "$T/$name.json" -- \
		/usr/bin/time -v -o "$T/$name.time" "$@" 2>"$T/$name.err" || rc=$?
	echo "$name: ctxmon stat --backend $b --check --json -- /usr/bin/time -v $* -> exit $rc"
	sed 's/^/  | /' "$T/$name.err"
	san_check "$name" "$T/$name.err"
	[ "$rc" = 0 ] || fail "$name: exit $rc"
	grep -q '^kernel counters: .*(traced vs getrusage: match)$' "$T/$name.err" ||
		fail "$name: no match verdict on stderr"
	res=$(python3 - "$T/$name.json" "$T/$name.time" "$norph" <<'PY'
import json, re, sys
j = json.load(open(sys.argv[1]))
t = open(sys.argv[2]).read()
nv = int(re.search(r"Voluntary context switches: (\d+)", t).group(1))
niv = int(re.search(r"Involuntary context switches: (\d+)", t).group(1))
procs = {p["pid"]: p for p in j["processes"]}
timep = [p for p in procs.values() if p["comm"] == "time"]
if len(timep) != 1:
    print("FAIL no single time process"); sys.exit()
tp = timep[0]["pid"]
# GNU time's child and its descendants, by the parent at fork
kids = {p for p in procs if procs[p]["ppid"] == tp}
grew = True
while grew:
    grew = False
    for p in procs.values():
        if p["pid"] not in kids and p["ppid"] in kids:
            kids.add(p["pid"]); grew = True
orph = [p for p in procs.values() if p["orphaned"]]
bad = [p["pid"] for p in orph if p["comm"] != "orphsleep"]
want = int(sys.argv[3])
named = [p for p in procs.values() if p["comm"] == "orphsleep"]
msgs = []
if bad:
    msgs.append("rows marked orphaned that are not: %s" % bad)
if len(named) != want or any(not p["orphaned"] for p in named):
    msgs.append("%d orphsleep rows, %d marked, want %d"
                % (len(named), sum(p["orphaned"] for p in named), want))
vol = invol = reaped = ep = 0
for th in j["threads"]:
    if th["tgid"] not in kids or th["orphaned"]:
        continue
    lead = th["tid"] == th["tgid"]
    vol += th["voluntary"] + th["exit_counted"]
    invol += th["involuntary"]
    # after a thread's fold or a leader's release: not in rusage
    invol -= th["after_fold"]
    vol -= th["after_fold_voluntary"]
    if lead and th["exit_switch"] > th["exit_counted"]:
        reaped += th["exit_switch"] - th["exit_counted"]
        ep += th["exit_preempt"]
    if not lead:
        ep += th["exit_preempt"]
ok_v = vol <= nv <= vol + reaped
ok_i = invol - ep <= niv <= invol
print("gnu time: nvcsw=%d nivcsw=%d; traced (not orphaned): voluntary %d"
      " (+%d leaders reaped as they switched out), involuntary %d"
      " (-%d exit preemptions); orphans %d" % (nv, niv, vol, reaped, invol, ep,
                                              len(orph)))
if not ok_v or not ok_i:
    msgs.append("traced counts do not match GNU time's")
for m in msgs:
    print("FAIL " + m)
PY
)
	echo "  $res" | sed 's/ FAIL /\n  FAIL /g'
	case "$res" in *FAIL*) fail "$name: $(echo "$res" | grep -o 'FAIL.*' | head -n 1)" ;; esac
	[ "$(json "$T/$name.json" 'j["kernel"]["match"]')" = true ] ||
		fail "$name: kernel.match is not true"
}

for b in ${EXACT_BACKENDS:-$(long_or "bpf-agg perf" "bpf-agg bpf perf ftrace ftrace-text")}; do
	backend_runs "orphans-$b" "$b" || continue
	gnutime_check "subshell-$b" "$b" 2 sh -c "($O 0.1 &); ($O 0.12 &); sleep 0.3"
	gnutime_check "daemon-$b" "$b" 1 sh -c "sh -c '$O 0.1 & exit 0'; sleep 0.25"
	gnutime_check "setsid-$b" "$b" 1 sh -c "setsid -f $O 0.1; sleep 0.25"
	gnutime_check "reaped-$b" "$b" 0 sh -c "sleep 0.05 & sleep 0.1; wait"
	case $b in bpf | bpf-agg) ;; *) continue ;; esac
	# two zombies: the shell execs sleep, which never waits for them
	gnutime_check "zombies-$b" "$b" 2 sh -c "$O 0.01 & $O 0.02 & exec sleep 0.3"
	gnutime_check "sigign-$b" "$b" 3 python3 -c "
import os, signal, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
for i in range(3):
    if os.fork() == 0:
        os.execv('$O', ['orphsleep', '0.02'])
time.sleep(0.3)
"
done

# A recording keeps the ORPHAN events: report applies the same rule as
# stat (before, report summed every row and mismatched on any orphan).
if backend_runs "record + report of zombies" bpf; then
	rc=0
	"$CTXMON" record --backend bpf -o "$T/z.ctxrec" -- \
		sh -c "$O 0.01 & $O 0.02 & (sleep 0.05 &); exec sleep 0.3" \
		>"$T/zrec.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || fail "record of the zombies: exit $rc"
	"$CTXMON" report --json -o "$T/z.json" "$T/z.ctxrec" 2>"$T/zrep.err" ||
		fail "report of the zombies: exit $?"
	n=$("$CTXMON" script "$T/z.ctxrec" | grep -c ': ctxmon_orphan: ' || true)
	res=$(json "$T/z.json" '[j["kernel"]["match"], sorted(p["comm"] for p in j["processes"] if p["orphaned"])]')
	echo "record + report of 2 zombies and an orphan: $n ctxmon_orphan lines; [kernel.match, orphaned rows] = $res"
	grep '^kernel counters' "$T/zrep.err" | sed 's/^/  | /'
	[ "$res" = '[true, ["orphsleep", "orphsleep", "sleep"]]' ] ||
		fail "report: want a match with the two zombies and the orphan marked, got $res"
	[ "$n" -ge 3 ] || fail "script: $n ctxmon_orphan lines, want at least 3"
	# stat --html's status box: the same comparison as its text (it
	# summed every row before it was given the command's pid)
	rc=0
	"$CTXMON" stat --backend bpf --html "$T/z.html" -o /dev/null -- \
		sh -c "$O 0.01 & $O 0.02 & (sleep 0.05 &); exec sleep 0.3" \
		2>"$T/zhtml.err" || rc=$?
	[ "$rc" = 0 ] || fail "stat --html of the zombies: exit $rc"
	box=$(grep -o 'Kernel comparison: [a-zA-Z]*\|Left out: [0-9]* orphaned' "$T/z.html" | tr '\n' ' ')
	echo "stat --html of 2 zombies and an orphan: $box"
	[ "$box" = 'Kernel comparison: match Left out: 3 orphaned ' ] ||
		fail "stat --html: want a match with 3 orphaned processes left out, got '$box'"
fi

# --check and the verdict on stderr
rc=0
"$CTXMON" stat --check -o "$T/c.txt" 2>"$T/c.err" || rc=$?
[ "$rc" = 2 ] || fail "--check without a command: exit $rc, want 2"
tp=
for b in $(long_or perf "perf ftrace ftrace-text"); do
	if "$CTXMON" stat --backend "$b" -o /dev/null -- true 2>/dev/null; then
		tp=$b
		break
	fi
done
if [ -z "$tp" ]; then
	not_judged "--check mismatch" "no tracepoint backend (perf, ftrace, ftrace-text) runs here"
else
	rc=0
	"$CTXMON" stat --backend "$tp" --check --json -o "$T/ign.json" -- python3 -c '
import os, signal, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
for i in range(3):
    if os.fork() == 0:
        for k in range(20):
            time.sleep(0.001)
        os._exit(0)
time.sleep(0.3)
' 2>"$T/ign.err" || rc=$?
	echo "ignored SIGCHLD: ctxmon stat --backend $tp --check -> exit $rc"
	sed 's/^/  | /' "$T/ign.err"
	[ "$rc" = 3 ] || fail "--check with a mismatch: exit $rc, want 3"
	grep -q '^kernel counters: .*MISMATCH)$' "$T/ign.err" ||
		fail "--check: no MISMATCH verdict on stderr"
	# The verdict says what explains it, and is right: without the rows
	# of the three children (released unreaped, as their parent ignores
	# SIGCHLD) the traced counts match the kernel's, under the exit rule.
	grep -q '^  the difference fits [0-9]* processes that may never have been reaped' "$T/ign.err" ||
		fail "--check: the mismatch does not say that unreaped children fit it"
	res=$(python3 - "$T/ign.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
k = j["kernel"]
procs = {p["pid"]: p for p in j["processes"]}
kids = [p for p in procs.values() if p["comm"] == "python3"
        and p["ppid"] in procs and procs[p["ppid"]]["comm"] == "python3"]
cv = sum(p["voluntary"] + p["exit_counted"] for p in kids)
ci = sum(p["involuntary"] for p in kids)
reaped = sum(p["exit_switch"] - p["exit_counted"] for p in kids)
amb = k["shown_running"] if k["sigsleep_bound"] else 0
lo_v = k["traced_voluntary"] - cv
hi_v = lo_v + k["leader_reaped"] - reaped + amb
hi_i = k["traced_involuntary"] - ci
lo_i = hi_i - k["exit_preempt"] - amb
ok = (len(kids) == 3 and k["unsure_explains"] and k["unsure_processes"] >= 3
      and k["unsure_voluntary"] >= cv and lo_v <= k["voluntary"] <= hi_v
      and lo_i <= k["involuntary"] <= hi_i)
print("%s: %d children (voluntary %d, involuntary %d); kernel nvcsw %d in"
      " %d..%d, nivcsw %d in %d..%d without them; unsure: %d processes,"
      " voluntary %d" % ("ok" if ok else "FAIL", len(kids), cv, ci,
                         k["voluntary"], lo_v, hi_v, k["involuntary"], lo_i,
                         hi_i, k["unsure_processes"], k["unsure_voluntary"]))
PY
)
	echo "  $res"
	case "$res" in ok:*) ;; *) fail "unreaped children: $res" ;; esac
fi

finish
