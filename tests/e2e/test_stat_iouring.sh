#!/bin/bash
# Threads the kernel starts inside a process with no fork event: io_uring's
# workers (iou-wrk-PID, create_io_thread()).  Their switches are in the
# process's rusage, so a command that uses io_uring is counted whole only
# if they are the command's.  stress-ng's io-uring stressor (a program we
# did not write) punts requests to them; under each backend that follows
# a command by its threads' process (bpf-agg, bpf, perf):
#
#   ctxmon stat --backend B --check --json -o out.json -- kcount stress-ng --io-uring 1 -t 2
#
# must match getrusage exactly (stat's --check, and kcount's wait4() of
# the command: lib.sh kcount_judge), with the workers' rows among the command's
# threads.  The ftrace backends cannot see them all (the kernel's pid
# filter follows forks only; they add a worker to it themselves when they
# read its task_newtask, docs/accounting.md): under ftrace the switches
# traced may fall short of rusage by less than 10% (34.7% before they
# added workers), and a mismatch must say why.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
command -v stress-ng >/dev/null || skip "stress-ng not installed (Debian package stress-ng)"

workers=0
for b in bpf-agg bpf perf; do
	backend_runs "io_uring-$b" "$b" || continue
	rc=0
	"$CTXMON" stat --backend "$b" --check --json -o "$T/$b.json" -- \
		"$WL/kcount" stress-ng --io-uring 1 -t 2 >/dev/null 2>"$T/$b.err" || rc=$?
	san_check "$b" "$T/$b.err"
	grep '^kernel counters' "$T/$b.err" | sed "s/^/$b: /"
	[ "$rc" = 0 ] || fail "$b: stat exited $rc: $(grep -v '^ *|' "$T/$b.err" | tail -n 3)"
	res=$(python3 - "$T/$b.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
k = j.get("kernel") or {}
procs = {p["pid"] for p in j["processes"]}
wk = [t for t in j["threads"] if t["comm"].startswith("iou-wrk")]
out = [t["tid"] for t in wk if t["tgid"] not in procs]
sw = sum(t["switches"] for t in wk)
print("workers=%d switches=%d outside=%d match=%d" % (len(wk), sw, len(out), bool(k.get("match"))))
PY
)
	echo "$b: $res"
	eval "${res// / ; }"
	[ "$match" = 1 ] || fail "$b: kernel.match is not true"
	[ "$outside" = 0 ] || fail "$b: $outside io_uring workers outside the command's processes"
	[ "$workers" -gt 0 ] && [ "$switches" -gt 0 ] && seen=1
	# --check is stat's own comparison; the command ran under kcount,
	# whose wait4() rusage of it is the kernel's count without ctxmon
	kcount_judge "$b" "$T/$b.json" "$T/$b.err" "$rc" -
done
[ -n "${seen:-}" ] || skip "stress-ng's io-uring stressor started no io_uring worker on this kernel"

# ftrace: its pid filter follows forks, so it misses the first switches of the
# workers; a mismatch must say why (the verdict's io_uring line and
# kernel.io_workers_explain), and --check exits 3 on it.
rc=0
"$CTXMON" stat --backend ftrace --check --json -o "$T/ftrace.json" \
	--html "$T/ftrace.html" -- stress-ng --io-uring 1 -t 2 >/dev/null \
	2>"$T/ftrace.err" || rc=$?
san_check ftrace "$T/ftrace.err"
grep -A1 '^kernel counters' "$T/ftrace.err" | sed 's/^/ftrace: /'
if [ "$rc" = 0 ] || [ "$rc" = 3 ]; then
	python3 - "$T/ftrace.json" <<'PY' || fail "ftrace: the workers were not followed"
import json, sys
k = json.load(open(sys.argv[1]))["kernel"]
kt = k["voluntary"] + k["involuntary"]
tt = k["traced_voluntary"] + k["traced_involuntary"]
short = 100.0 * (kt - tt) / kt if kt else 100.0
print("ftrace: %d switches traced of rusage's %d: %.1f%% short (at most 10%%)" % (tt, kt, short))
sys.exit(0 if kt and short < 10 else 1)
PY
fi
case $rc in
0) ;;
3)
	grep -q '^  io_uring workers (iou-wrk) ran in the command' "$T/ftrace.err" ||
		fail "ftrace: a mismatch without the io_uring line"
	python3 -c 'import json, sys; k = json.load(open(sys.argv[1]))["kernel"]; sys.exit(0 if k["io_workers"] and k["io_workers_explain"] and not k["match"] else 1)' \
		"$T/ftrace.json" || fail "ftrace: kernel.io_workers / io_workers_explain not set on the mismatch"
	grep -q '<div>io_uring workers (iou-wrk) ran in the command' "$T/ftrace.html" ||
		fail "ftrace: the HTML status box lacks the io_uring line"
	;;
*) grep -qi "tracefs" "$T/ftrace.err" && echo "ftrace: not available here" ||
	fail "ftrace: stat exited $rc: $(tail -n 2 "$T/ftrace.err")" ;;
esac
finish
