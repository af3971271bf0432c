# tests/e2e/lib.sh - helpers shared by the end-to-end tests (sourced).
#
# Each test is a bash script run by tests/run.sh with:
#   CTXMON  the ctxmon binary under test (the ASan/UBSan build)
#   WL      the directory of the test workloads (kcount, pingpong, ...)
# and exits 0 (pass), 77 (skip, reason on the last line) or anything else
# (fail, reason on stderr).  JSON is read with python3 (Debian: python3).

set -u

: "${CTXMON:?CTXMON must name the ctxmon binary}"
: "${WL:?WL must name the workloads directory}"

T=$(mktemp -d /tmp/ctxmon-e2e.XXXXXX)
# this directory: the python helpers beside lib.sh (proctree.py)
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BG_PIDS=""
NFAIL=0

# Kill what bg() started (by pid) and remove the scratch directory (kept,
# and named on stderr, when a check failed and E2E_KEEP is set).
_cleanup() {
	local p
	for p in $BG_PIDS; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ "$NFAIL" -ne 0 ] && [ -n "${E2E_KEEP:-}" ]; then
		echo "scratch directory kept: $T" >&2
		return
	fi
	rm -rf "$T"
}
trap _cleanup EXIT

# bg CMD ARGS...: start a background load; it is killed at exit.  Its pid is
# left in BG_PID.
bg() {
	"$@" &
	BG_PID=$!
	BG_PIDS="$BG_PIDS $BG_PID"
}

skip() {
	echo "SKIP: $*"
	exit 77
}

# recording_started FILE PID: wait (up to 30 s) until the recorder PID has
# written the session's metadata to FILE.part (where a capture writes
# until it ends; FILE itself for -o - or a device), which it does right after its
# capture started, before any event (the file holds only its header
# before).  A fixed sleep was not enough: a sanitizer build on a loaded
# machine took 1.5 s to start.  Returns 1 if the recorder died or the
# time ran out.
recording_started() {
	local i=0 sz
	while [ $i -lt 600 ]; do
		sz=$(stat -c %s "$1.part" 2>/dev/null ||
			stat -c %s "$1" 2>/dev/null || echo 0)
		[ "$sz" -gt 256 ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# wait_for TIMEOUT CMD...: run CMD every 50 ms until it succeeds (status
# 0) or TIMEOUT seconds have passed (status 1).  For waiting on an event
# (a file written, a process started, a line printed) instead of sleeping
# a fixed time that a loaded machine can outlast.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	while :; do
		"$@" && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.05
	done
}

# end_wait PID [SECONDS]: the exit status of PID (a background job of
# this shell, already signalled to stop); one still running SECONDS later
# (default 30) is killed and gives 124, with a FAIL line, so that a tracer
# stuck on its way out fails with a reason instead of hanging the test
# until the runner's timeout (a bpftrace once did, its output never shown).
end_wait() {
	local pid=$1 rc=0
	if ! wait_for "${2:-30}" _ended "$pid"; then
		fail "pid $pid ($(tr -d '\0' <"/proc/$pid/comm" 2>/dev/null)) still running ${2:-30} s after it was told to stop: killed"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 124
	fi
	wait "$pid" || rc=$?
	return $rc
}

# _ended PID: PID has exited (gone, or a zombie not yet waited for)
_ended() {
	local st
	[ -e "/proc/$1" ] || return 0
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 0
	[ "${st%% *}" = Z ]
}

fail() {
	echo "FAIL: $*" >&2
	NFAIL=$((NFAIL + 1))
}

# not_judged CHECK REASON: a check of a test that runs was not made (a
# backend that does not load here, a tool that is missing).  tests/run.sh
# counts each such line as a skip and prints it even when the test passes;
# a test none of whose checks could be made exits with skip() instead.
not_judged() {
	local what=$1
	shift
	echo "NOT JUDGED: $what: $*"
}

# backend_runs CHECK BACKEND: status 0 if `ctxmon stat --backend BACKEND`
# captures here (a run of `true`); otherwise CHECK is reported not judged
# with stat's first line of error, and the status is 1.  A test probes
# first so that a later failure of the backend is a failure, not taken
# for "not available here" by the words of its message.
backend_runs() {
	if "$CTXMON" stat --backend "$2" -o /dev/null -- true 2>"$T/probe-$2.err"; then
		return 0
	fi
	not_judged "$1" "backend $2 does not run here: $(head -n 1 "$T/probe-$2.err")"
	return 1
}

# long_or SHORT LONG: SHORT in make test, LONG in make check (CTXMON_LONG=1).
# A test marked "# tier: both" repeats or widens its checks in the long
# tier with it: more backends, more runs, a bigger workload.
long_or() {
	if [ "${CTXMON_LONG:-0}" = 1 ]; then echo "$2"; else echo "$1"; fi
}

# Exit with the verdict: 1 if fail() was called, 0 otherwise.
finish() {
	if [ "$NFAIL" -ne 0 ]; then
		echo "$NFAIL check(s) failed" >&2
		exit 1
	fi
	exit 0
}

# san_check NAME FILE: fail if FILE (a stderr capture) holds a sanitizer
# report.
san_check() {
	if grep -Eq 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:' "$2"; then
		fail "$1: sanitizer report on stderr:"
		grep -E -A5 'Sanitizer|runtime error:' "$2" | head -n 30 >&2
	fi
}

skip_unless_root() {
	[ "$(id -u)" = 0 ] || skip "needs root"
}

# Capture needs tracefs for the event formats; tests/run.sh mounts it.
skip_unless_tracefs() {
	[ -e /sys/kernel/tracing/events/sched/sched_switch/format ] ||
		skip "tracefs not mounted at /sys/kernel/tracing"
}

# bpftrace_attached NTP: wait (up to 20 s each) for the bpftrace started
# in the background as $bt, output in $T/bt.out and $T/bt.err, to say it
# is attaching, then until bpftool lists its NTP tracepoint programs
# attached (`bpftool perf show`): its "Attaching N probes..." comes
# before the attach, and events of a run started then would escape it.
# Skips the test if bpftrace never says it; a FAIL if it never attaches.
bpftrace_attached() {
	local n
	wait_for 20 grep -q "Attaching" "$T/bt.out" "$T/bt.err" 2>/dev/null ||
		skip "bpftrace did not attach: $(tail -n 1 "$T/bt.err")"
	command -v bpftool >/dev/null ||
		skip "bpftool not installed (Debian package bpftool): cannot tell when bpftrace has attached"
	if ! wait_for 20 _bt_attached "$bt" "$1"; then
		n=$(bpftool perf show 2>/dev/null | grep -c "^pid $bt ")
		fail "bpftrace attached $n of its $1 tracepoints in 20 s"
	fi
}

# measure_again FN WHAT MSG: run FN, one whole measurement against a
# second tracer, again while it returns 2 (only a maximum disagreed: the
# vCPU can stall between two programs' clock reads of one event, most
# often inside the longest waits; test_latency_bpftrace's header) and
# nothing else failed, 3 runs at most; WHAT names that disagreement.
# Any other non-zero status is a FAIL saying MSG.
measure_again() {
	local fn=$1 what=$2 msg=$3 try rc
	for try in 1 2 3; do
		rc=0
		"$fn" || rc=$?
		[ "$rc" = 2 ] && [ "$NFAIL" = 0 ] || break
		[ "$try" = 3 ] || echo "note: attempt $try: $what, measured again"
	done
	case $rc in
	0) ;;
	2) [ "$NFAIL" != 0 ] || fail "$what in each of 3 runs" ;;
	*) fail "$msg" ;;
	esac
}

# A bpftrace script of a test ends with "$(bpftrace_exit_probe)": a probe
# that calls exit() when a process of comm $BT_STOP exits, which
# bpftrace_stop runs.  bpftrace 0.17 acts on a SIGINT only when its
# epoll_wait returns EINTR: one that lands while it reads its buffers is
# noted and never acted on, and it polls on (a hung one under gdb: in
# epoll_wait with a 100 ms timeout, SIGINT caught, none pending; 4 runs of
# 20 of test_latency_bpftrace beside stress-ng --cpu 1), and a second
# SIGINT while it prints its maps kills it with none printed.  exit() sets
# a flag its loop reads at every turn.
BT_STOP=btstop$$
BT_STOP=${BT_STOP:0:15}
bpftrace_exit_probe() {
	printf '\ntracepoint:sched:sched_process_exit /comm == "%s"/ { exit(); }\n' "$BT_STOP"
}

# bpftrace_stop PID: stop the bpftrace PID (a background job whose script
# has the exit probe) and give its exit status; 124 and a FAIL when it
# still runs 30 s later.
bpftrace_stop() {
	[ -x "$T/$BT_STOP" ] || cp /bin/true "$T/$BT_STOP"
	"$T/$BT_STOP"
	end_wait "$1"
}

_bt_attached() {
	[ "$(bpftool perf show 2>/dev/null | grep -c "^pid $1 .* tracepoint ")" -ge "$2" ]
}

skip_unless_capture() {
	skip_unless_root
	skip_unless_tracefs
	[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
}

# json FILE EXPR: print EXPR evaluated in python3 with `j` bound to the JSON
# document in FILE (first line of an NDJSON file if LINE is not given).
# Booleans print as true/false, None as null, lists/dicts as JSON.
#   json out.json 'j["kernel"]["voluntary"]'
json() {
	python3 - "$1" "$2" "${3:-0}" <<'PY'
import json, sys
path, expr, line = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path) as f:
    text = f.read()
try:
    j = json.loads(text)
except ValueError:
    j = json.loads(text.splitlines()[line])
v = eval(expr, {"j": j})
print(json.dumps(v) if isinstance(v, (bool, list, dict)) or v is None else v)
PY
}

# json_check FILE: exit non-zero with a message unless FILE holds one JSON
# object or NDJSON (one object per line).
json_check() {
	python3 - "$1" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
try:
    json.loads(text)
except ValueError as e:
    lines = [l for l in text.splitlines() if l.strip()]
    if not lines:
        sys.exit("empty JSON output")
    for n, l in enumerate(lines):
        try:
            json.loads(l)
        except ValueError as e2:
            sys.exit("line %d: %s" % (n + 1, e2))
PY
}

# tree_sums FILE ROOT: sums over the process row ROOT and every process row
# descending from it (by "ppid"), printed as shell assignments:
#   found=1 nproc=N nthreads=N voluntary=N involuntary=N exit_switch=N
#   leader_exits=N exit_preempt=N exit_block=N exited=N
# leader_switches counts the exit switch-outs of the processes' leader
# threads (thread rows with tid == tgid): one per process; leader_exits
# those the kernel counts (exit_counted: state Z, the leader not reaped
# before it switched out).  involuntary leaves out after_fold, the
# preemptions a BPF backend saw after exit folded a thread's counters (or
# a leader's reap read them), and voluntary after_fold_voluntary, the same
# for blocking (PREEMPT_RT).
# exit_block: where ctxmon found the kernel PREEMPT_RT (kernel.preempt_rt),
# non-leader threads' blocks after their exit that a tracepoint backend
# cannot place against the fold; 0 elsewhere.
# found=0 when there is no row for ROOT.
tree_sums() {
	python3 - "$1" "$2" "$E2E_DIR" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[3])
from proctree import Rows, tree
j = json.load(open(sys.argv[1]))
root = int(sys.argv[2])
rows = Rows(j["processes"])
if root not in rows.by_pid:
    print("found=0"); sys.exit()
# orphans (reparented away, so reaped by init, not in the root's rusage)
# are left out, as the kernel leaves them out; what they reaped with them
keep = tree(rows, root, orphans=False)
R = rows.rows
s = {"found": 1, "nproc": len(keep)}
s["orphans"] = sum(1 for p in R.values() if p.get("orphaned"))
for f in ("nthreads", "voluntary", "involuntary", "exit_switch"):
    s[f] = sum(R[k][f] for k in keep)
# the threads of the kept rows: leaders, and the others
mine = [t for t in j["threads"] if rows.of_thread(t) in keep]
lead = [t for t in mine if t["tid"] == t["tgid"]]
# exit-path preemptions the kernel may count or not: non-leader threads'
s["exit_preempt"] = sum(t.get("exit_preempt", 0) for t in mine
                        if t["tid"] != t["tgid"])
s["exit_block"] = 0
if j.get("kernel", {}).get("preempt_rt"):
    s["exit_block"] = sum(t.get("exit_block", 0) for t in mine
                          if t["tid"] != t["tgid"])
s["exited"] = sum(1 for k in keep if R[k]["exited"])
s["leader_switches"] = sum(t["exit_switch"] for t in lead)
s["leader_exits"] = sum(t.get("exit_counted", 0) for t in mine)
# leaders whose last switch showed X: reaped as they switched out, so the
# kernel may or may not have counted it (docs/accounting.md)
s["leader_reaped"] = sum(t["exit_switch"] - t.get("exit_counted", 0)
                         for t in lead)
# such a leader's preemptions after its exit may precede the reap or not
s["exit_preempt"] += sum(t.get("exit_preempt", 0) for t in lead
                         if t["exit_switch"] > t.get("exit_counted", 0))
s["involuntary"] -= sum(R[k].get("after_fold", 0) for k in keep)
s["voluntary"] -= sum(R[k].get("after_fold_voluntary", 0) for k in keep)
print(" ".join("%s=%d" % kv for kv in s.items()))
PY
}

# proc_tree FILE ROOT: one line per process row in ROOT's tree (for logs;
# the first 30 of a larger tree).
proc_tree() {
	python3 - "$1" "$2" "$E2E_DIR" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[3])
from proctree import Rows, tree
j = json.load(open(sys.argv[1]))
root = int(sys.argv[2])
rows = Rows(j["processes"])
keys = sorted(tree(rows, root))
# a storm's tree holds thousands: the first 30 rows are enough for a log
if len(keys) > 30:
    print("  (%d process rows, the first 30:)" % len(keys))
for k in keys[:30]:
    p = rows.rows[k]
    print("  pid=%d gen=%d ppid=%s comm=%s nthreads=%s vol=%s invol=%s exit_switch=%s"
          " exit_preempt=%s exited=%s"
          % (k[0], k[1], p.get("ppid"), p["comm"], p["nthreads"], p["voluntary"],
             p["involuntary"], p["exit_switch"], p.get("exit_preempt"),
             p["exited"]))
PY
}

# thread_checks FILE ROOT: for every thread of ROOT's process tree (all of
# them born and dead during the capture): run + wait + sleep (S, D, other)
# == span.  Prints one line per broken thread (at most 5) and exits 1 if
# any.  Also notes (without failing) threads with fewer switch-ins than
# switch-outs: some kernels do not trace every switch out of the idle task
# (seen on this 6.18 VM: none on CPU 1, with ftrace and perf alike), which
# leaves ctxmon nothing to count.
thread_checks() {
	python3 - "$1" "$2" "$E2E_DIR" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[3])
from proctree import Rows, tree
j = json.load(open(sys.argv[1]))
root = int(sys.argv[2])
rows = Rows(j["processes"])
keep = tree(rows, root)
bad_in = bad_t = 0
for t in j["threads"]:
    if rows.of_thread(t) not in keep:
        continue
    if t["switch_in"] != t["switches"]:
        bad_in += 1
        if bad_in <= 5:
            print("  note: thread %d (%s): switch_in %d, switches out %d"
                  % (t["tid"], t["comm"], t["switch_in"], t["switches"]))
    tot = (t["run_ns"] + t["wait_ns"] + t["sleep_s_ns"] + t["sleep_d_ns"]
           + t["sleep_other_ns"])
    if tot != t["span_ns"]:
        bad_t += 1
        if bad_t <= 5:
            print("  thread %d (%s): run+wait+sleep %d ns, span %d ns"
                  % (t["tid"], t["comm"], tot, t["span_ns"]))
sys.exit(1 if bad_t else 0)
PY
}

# heavy_switchers: the pids of the processes (summed over their threads)
# that switch more than 1000 times in 0.5 s now, one a line: someone
# else's load, which may rank above a test's own in a machine-wide view
# (test_top_batch, test_top_tui).
heavy_switchers() {
	python3 - <<'PY'
import glob, time
def counts():
    c = {}
    for f in glob.glob("/proc/[0-9]*/task/*/status"):
        try:
            text = open(f).read()
        except OSError:
            continue
        pid = int(f.split("/")[2])
        c[pid] = c.get(pid, 0) + sum(int(l.split()[1]) for l in text.splitlines()
                                     if "ctxt_switches" in l)
    return c
a = counts()
time.sleep(0.5)
b = counts()
for pid, n in b.items():
    if n - a.get(pid, n) > 1000:
        print(pid)
PY
}

# serve_needs WHY CMD...: skip unless root, the commands CMD are installed
# and a cgroup v2 mount is writable; sets cg2 to that mount.  WHY says
# what root is for.
serve_needs() {
	local c
	[ "$(id -u)" = 0 ] || skip "needs root ($1)"
	shift
	for c in "$@"; do
		command -v "$c" >/dev/null || skip "$c not installed (scripts/setup.sh installs it)"
	done
	cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$cg2" ] && [ -w "$cg2" ] || skip "no writable cgroup v2 mount"
}

# serve_collections: ctxmon_collections_total of the serve at $URL.
serve_collections() {
	curl -sf "$URL" | collections_in
}

# collections_in [FILE]: the collections_total of a scrape (stdin, or a
# kept one)
collections_in() {
	awk '$1 == "ctxmon_collections_total" { print $2 }' "$@"
}

# serve_quiet CGDIR...: until every thread of the cgroups is stopped
# (SIGSTOP), then until two collections after that; a test failure when
# none comes.
serve_quiet() {
	local t s c0 c
	for _ in $(seq 300); do
		s=1
		for t in $(cat "${@/%//cgroup.threads}"); do
			[ "$(awk '{ print $3 }' /proc/$t/stat 2>/dev/null)" = T ] || s=0
		done
		[ $s = 1 ] && break
		sleep 0.1
	done
	c0=$(serve_collections)
	for _ in $(seq 300); do
		c=$(serve_collections)
		[ -n "$c" ] && [ "$c" -ge $((c0 + 2)) ] && return 0
		sleep 0.1
	done
	fail "no fresh collection"
}

# serve_start BIN ARGS...: run "BIN serve --listen 127.0.0.1:0 ARGS..." in
# the background, its stderr in $T/serve.err, until it listens; sets SRV
# (its pid), PORT and URL (its /metrics).  The test ends when it does not
# start.
serve_start() {
	local bin=$1
	shift
	"$bin" serve --listen 127.0.0.1:0 "$@" 2>"$T/serve.err" &
	SRV=$!
	for _ in $(seq 600); do
		grep -q "listening on" "$T/serve.err" && break
		kill -0 "$SRV" 2>/dev/null || break
		sleep 0.1
	done
	PORT=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$T/serve.err")
	[ -n "$PORT" ] || { cat "$T/serve.err" >&2; fail "serve did not start"; finish; }
	URL=http://127.0.0.1:$PORT/metrics
}

# serve_stop: SIGTERM to serve, which must exit with status 0, and its
# stderr checked for sanitizer reports.
serve_stop() {
	local rc=0
	kill -TERM "$SRV"
	wait "$SRV" || rc=$?
	SRV=""
	[ $rc = 0 ] || fail "serve exit status $rc after SIGTERM"
	san_check serve "$T/serve.err"
}

# kcount_get ERRFILE KEY: a value from kcount's stderr line
# "kcount: pid=P nvcsw=V nivcsw=I status=S cpu_us=C".
kcount_get() {
	sed -n "s/^kcount: .*\\b$2=\\([0-9-]*\\).*/\\1/p" "$1" | tail -n 1
}

# stat_kcount NAME NTHREADS ARGS...: run
#   $CTXMON stat --json -o $T/NAME.json -- $WL/kcount ARGS...
# and compare the workload's process tree (kcount's child and its
# descendants, by ppid) with kcount's wait4() rusage, exactly:
#
#   voluntary + leader exit switch-outs == ru_nvcsw
#   involuntary                         == ru_nivcsw
#
# (with a tracepoint backend, involuntary may exceed ru_nivcsw by at most
# exit_preempt: preemptions of exiting threads that cannot be placed before
# or after the kernel's fold; a bpf capture must be exact)
#
# The last switch-out of a dying thread is reported apart (exit_switch, one
# per thread) and is not in voluntary.  The kernel counts it (in nvcsw: the
# state is not running) but folds a non-leader thread's counters into its
# process before that switch, so only the process leaders' ones (state Z,
# read when the parent reaps them) reach rusage; see docs/accounting.md.
# Also: stat's exit status == the workload's, every thread and process seen
# exiting, NTHREADS (if not "-") threads in the child's own row, nothing
# lost, no ordering violation, kernel.match true.  Records failures with
# fail(); the caller ends with finish().
#
# Each run is made once per backend of STAT_BACKENDS (default: stat's own
# default, bpf-agg where BPF loads, then the perf_event fallback), so the
# foundation's checks hold for both; STAT_OPTS adds options to each.
stat_kcount() {
	local name=$1 want_threads=$2 b
	shift 2
	for b in ${STAT_BACKENDS:-default perf}; do
		if [ "$b" = default ]; then
			_stat_kcount "$name" "$want_threads" "" "$@"
		else
			_stat_kcount "$name-$b" "$want_threads" "$b" "$@"
		fi
	done
}

# _stat_kcount NAME NTHREADS BACKEND ARGS...: one run of stat_kcount
# (BACKEND "" for stat's default).
_stat_kcount() {
	local name=$1 want_threads=$2 backend=$3 out err rc
	local -a bopt=() xopt=()
	shift 3
	out=$T/$name.json
	err=$T/$name.err
	[ -z "$backend" ] || bopt=(--backend "$backend")
	# STAT_OPTS: more options for stat, words split at spaces
	[ -z "${STAT_OPTS:-}" ] || read -ra xopt <<<"$STAT_OPTS"
	bopt+=("${xopt[@]}")

	# A streaming capture whose reader fell behind (a loaded machine)
	# loses events and says so: that run is made again, up to 3 times,
	# and a check never made without loss is not judged.
	local try lost
	for try in 1 2 3; do
		rc=0
		"$CTXMON" stat "${bopt[@]}" --json -o "$out" -- "$WL/kcount" "$@" 2>"$err" || rc=$?
		echo "$name: ctxmon stat${bopt[*]:+ ${bopt[*]}} --json -- kcount $* -> exit $rc"
		sed 's/^/  | /' "$err"
		san_check "$name" "$err"
		lost=$(json "$out" 'j["capture"]["lost"]' 2>/dev/null)
		case $lost in
		'' | 0) break ;;
		esac
		if [ "$try" = 3 ]; then
			not_judged "$name" "the capture lost events in 3 runs ($lost in the last)"
			return
		fi
		echo "  $lost events lost: run again"
	done
	kcount_judge "$name" "$out" "$err" "$rc" "$want_threads"
}

# kcount_judge NAME JSON ERR RC NTHREADS: the checks of stat_kcount on a
# summary JSON (stat --json, or report --json of a recording) of a run
# of $WL/kcount, whose line is in ERR, RC the exit status of the ctxmon
# command that ran it (- when it has none to compare).  Records failures
# with fail().
kcount_judge() {
	local name=$1 out=$2 err=$3 rc=$4 want_threads=$5 pid nv niv st
	local found nproc nthreads voluntary involuntary exit_switch
	local leader_exits leader_switches leader_reaped exit_preempt exit_block
	local exited
	local lost ov anom match vol

	pid=$(kcount_get "$err" pid)
	nv=$(kcount_get "$err" nvcsw)
	niv=$(kcount_get "$err" nivcsw)
	st=$(kcount_get "$err" status)
	if [ -z "$pid" ] || [ -z "$nv" ] || [ -z "$niv" ]; then
		fail "$name: no kcount line on stderr"
		return
	fi
	if [ "$rc" != - ] && [ "$rc" != "$st" ]; then
		fail "$name: stat exit status $rc, workload exited $st"
	fi
	if [ ! -s "$out" ] || ! json_check "$out"; then
		fail "$name: no valid JSON in $out"
		return
	fi

	eval "$(tree_sums "$out" "$pid")"
	if [ "$found" != 1 ]; then
		fail "$name: no process row for pid $pid"
		return
	fi
	lost=$(json "$out" 'j["capture"]["lost"]')
	ov=$(json "$out" 'j["capture"]["order_violations"]')
	anom=$(json "$out" 'j["capture"].get("anomalies")')
	match=$(json "$out" 'j.get("kernel", {}).get("match")')
	proc_tree "$out" "$pid"
	vol=$((voluntary + leader_exits))
	echo "  kernel (kcount): nvcsw=$nv nivcsw=$niv;" \
		"traced: voluntary=$voluntary+$leader_exits leader exits=$vol" \
		"involuntary=$involuntary (exit_preempt=$exit_preempt," \
		"exit_block=$exit_block)" \
		"exit_switch=$exit_switch threads=$nthreads processes=$nproc;" \
		"lost=$lost order_violations=$ov anomalies=$anom kernel.match=$match"

	if [ "$vol" != "$nv" ]; then
		# a leader reaped as it switched out (state X) may be counted
		if [ "$nv" -gt "$vol" ] && [ "$nv" -le $((vol + leader_reaped)) ]; then
			echo "  note: voluntary $vol vs nvcsw $nv: the $((nv - vol)) extra" \
				"within the $leader_reaped leaders reaped as they switched out"
		elif [ "$nv" -lt "$vol" ] && [ "$nv" -ge $((vol - exit_block)) ]; then
			echo "  note: voluntary $vol vs nvcsw $nv: the $((vol - nv)) short" \
				"within the $exit_block exiting threads' blocks that may" \
				"come after the fold on this PREEMPT_RT kernel"
		else
			fail "$name: voluntary: traced $voluntary + $leader_exits leader exits = $vol, kernel nvcsw $nv (diff $((vol - nv)), $leader_reaped leaders reaped as they switched out)"
		fi
	fi
	if [ "$involuntary" != "$niv" ]; then
		local d=$((involuntary - niv)) why="" backend
		backend=$(json "$out" 'j["backend"]')
		[ "$lost" = 0 ] || why=" ($lost events lost)"
		# Tracepoint backends cannot tell whether an exiting thread's
		# preemption came before the kernel folded its counters
		# (docs/accounting.md); the window is counted, and a backend
		# that reads the task's own counters (bpf) must be exact.
		if [ "$lost" = 0 ] && [ "$backend" != bpf ] && [ "$d" -gt 0 ] &&
			[ "$d" -le "$exit_preempt" ]; then
			echo "  note: involuntary $involuntary vs nivcsw $niv: the $d extra" \
				"lie within the $exit_preempt exit-path preemptions the $backend" \
				"backend cannot place before or after the kernel's fold"
		else
			fail "$name: involuntary: traced $involuntary, kernel nivcsw $niv (diff $d, backend $backend)$why"
		fi
	fi
	[ "$exit_switch" = "$nthreads" ] ||
		fail "$name: exit_switch $exit_switch, expected one per thread ($nthreads)"
	[ "$leader_switches" = "$nproc" ] ||
		fail "$name: $leader_switches leader exit switch-outs, expected one per process ($nproc)"
	[ "$exited" = "$nproc" ] ||
		fail "$name: $exited of $nproc processes seen exiting"
	if [ "$want_threads" != - ]; then
		local own
		own=$(json "$out" "[p['nthreads'] for p in j['processes'] if p['pid'] == $pid][0]")
		[ "$own" = "$want_threads" ] ||
			fail "$name: process $pid has $own threads, expected $want_threads"
	fi
	[ "$lost" = 0 ] || fail "$name: capture lost $lost events"
	[ "$ov" = 0 ] || fail "$name: $ov order violations"
	[ "$match" = true ] || fail "$name: kernel.match is $match, expected true"
	thread_checks "$out" "$pid" ||
		fail "$name: per-thread run + wait + sleep != span"
}

# zstat NAME BACKEND N MODE [--json]: stat --check of zombies N MODE into
# $T/NAME.out; its exit status must be 0
zstat() {
	local name=$1 b=$2 rc=0
	"$CTXMON" stat --backend "$b" --check ${5:-} -o "$T/$name.out" -- \
		"$WL/zombies" "$3" "$4" >/dev/null 2>"$T/$name.err" || rc=$?
	san_check "$name" "$T/$name.err"
	sed "s/^/  | $name: /" "$T/$name.err"
	[ "$rc" = 0 ] || fail "$name: stat --backend $b --check -- zombies $3 $4 exited $rc"
}
