# tests/e2e/causes_lib.sh - helpers of the test_causes_*.sh and
# test_latency_*.sh tests (sourced after lib.sh).
#
# They read the JSON of `ctxmon stat --causes --json` (threads[].causes,
# pairs[]) and of `ctxmon latency --json` (groups[], pairs[]).

# causes_stat NAME ARGS...: run `$CTXMON stat --causes --json -o $T/NAME.json
# ARGS...`, its stderr in $T/NAME.err (shown, sanitizer-checked).  Fails
# the test (and returns 1) when there is no valid JSON.
causes_stat() {
	local name=$1 rc=0
	shift
	"$CTXMON" stat --causes --json -o "$T/$name.json" "$@" 2>"$T/$name.err" ||
		rc=$?
	echo "$name: ctxmon stat --causes $* -> exit $rc"
	sed 's/^/  | /' "$T/$name.err"
	san_check "$name" "$T/$name.err"
	if [ ! -s "$T/$name.json" ] || ! json_check "$T/$name.json"; then
		fail "$name: no valid JSON"
		return 1
	fi
	return 0
}

# causes_sums FILE: for every thread and process row with causes, the parts
# add up (docs/causes.md): involuntary causes = involuntary, voluntary
# causes = voluntary, the syscall table = voluntary.syscall, exit causes =
# exit_switch, and the off-CPU time of every cause (asleep and runnable) =
# the row's sleep (S + D + other) and wait.  Prints a summary; fails the
# test on any difference.
causes_sums() {
	local out
	out=$(python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
bad, rows = [], 0
for kind in ("threads", "processes"):
    for r in j[kind]:
        c = r.get("causes")
        if c is None:
            continue
        rows += 1
        who = "%s %s (%s)" % ({"threads": "thread", "processes": "process"}[kind], r.get("tid", r.get("pid")), r["comm"])
        inv, vol = c["involuntary"], c["voluntary"]
        parts = list(inv.values()) + [vol[k] for k in ("syscall", "no_syscall", "unknown")]
        def chk(what, got, want):
            if got != want:
                bad.append("%s: %s: causes give %d, the row %d" % (who, what, got, want))
        chk("involuntary", sum(v["count"] for v in inv.values()), r["involuntary"])
        chk("voluntary", sum(vol[k]["count"] for k in ("syscall", "no_syscall", "unknown")), r["voluntary"])
        chk("syscall table", sum(s["count"] for s in vol["syscalls"]), vol["syscall"]["count"])
        chk("exit", sum(c["exit"].values()), r["exit_switch"])
        chk("asleep ns", sum(p["sleep_ns"] for p in parts) + c["initial"]["sleep_ns"],
            r["sleep_s_ns"] + r["sleep_d_ns"] + r["sleep_other_ns"])
        chk("runnable ns", sum(p["wait_ns"] for p in parts) + c["initial"]["wait_ns"], r["wait_ns"])
        if kind == "threads":
            # (a process' span is its threads' union, not their sum)
            chk("off-CPU ns", c["offcpu_ns"], r["span_ns"] - r["run_ns"])
print("%d rows checked" % rows)
for b in bad[:20]:
    print("MISMATCH " + b)
sys.exit(1 if bad or not rows else 0)
PY
	) || fail "causes_sums $1: the parts do not add up"
	echo "$out" | sed 's/^/  sums: /'
}

# causes_thread FILE TID EXPR: EXPR in python with t = the thread row of TID
# and c = its causes (None when there is no such row).
causes_thread() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
tid = int(sys.argv[2])
t = next((r for r in j["threads"] if r["tid"] == tid), None)
c = t.get("causes") if t else None
v = eval(sys.argv[3], {"t": t, "c": c, "j": j})
print(json.dumps(v) if isinstance(v, (bool, list, dict)) or v is None else v)
PY
}

# causes_tids FILE COMM: the tids of the thread rows named COMM, one a line.
causes_tids() {
	python3 - "$1" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for r in j["threads"]:
    if r["comm"] == sys.argv[2]:
        print(r["tid"])
PY
}
