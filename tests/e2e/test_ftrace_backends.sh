#!/bin/bash
# One run of the five-thread workload (multi5) captured by every streaming
# backend at once.  The stats nest:
#
#   ctxmon stat --backend perf -- ctxmon stat --backend ftrace --
#     ctxmon stat --backend ftrace-text [-- ctxmon stat --backend bpf] -- multi5
#
# so every layer follows the same threads from their fork, and every layer
# compares its traced counts with the getrusage of its own child (the next
# layer, which reaps everything below it).  Checks, for each backend:
# kernel.match (the rule of docs/accounting.md), nothing lost, no ordering
# violation; and across backends: the same voluntary, involuntary and
# exit_switch for each of multi5's five threads; and the innermost layer
# against kcount's wait4() rusage of multi5 (lib.sh kcount_judge).  The
# bpf layer is there only when `ctxmon stat --backend bpf` works here (it
# says NOT JUDGED otherwise).
#
# Every layer gets a buffer deep enough for the whole run, so a layer
# starved of CPU by the workload and the other layers (the text one
# first) loses nothing: the sizes are not what is tested here
# (test_ftrace_lost.sh is about loss).  The inner layers run without
# LeakSanitizer: its tracer task, forked at exit and reaped at once,
# can be reaped before its last switch-out, which the kernel then never
# counts; the outer layers would see that as a mismatch of the inner
# ctxmon, not of the workload.  The other tests keep leak checking on.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

backends="perf ftrace ftrace-text"
if "$CTXMON" stat --backend bpf -- true >"$T/bpf.probe" 2>&1; then
	backends="$backends bpf"
else
	not_judged "bpf layer" "the bpf backend does not run here: $(tail -n 1 "$T/bpf.probe")"
fi

# per-CPU sizes: 1 GiB in all for perf, 256 MiB for each ftrace layer
perf_kb=$((1048576 / $(nproc)))
[ "$perf_kb" -le 131072 ] || perf_kb=131072
[ "$perf_kb" -ge 4096 ] || perf_kb=4096
ftrace_kb=$((262144 / $(nproc)))
[ "$ftrace_kb" -le 65536 ] || ftrace_kb=65536
[ "$ftrace_kb" -ge 4096 ] || ftrace_kb=4096

# run_nested TAG: one nested run; JSON in $T/TAG-<backend>.json.
run_nested() {
	local tag=$1 cmd=() rc=0 b
	for b in $backends; do
		[ ${#cmd[@]} = 0 ] || cmd+=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
		cmd+=("$CTXMON" stat --backend "$b" --json -o "$T/$tag-$b.json")
		# perf records the whole machine (the others follow the
		# command in the kernel): the deepest buffer
		case $b in
		perf) cmd+=(-m "$perf_kb") ;;
		ftrace*) cmd+=(-m "$ftrace_kb") ;;
		esac
		cmd+=(--)
	done
	# under kcount: its wait4() rusage of multi5 is the kernel's count
	# read without any of the layers
	cmd+=("$WL/kcount" "$WL/multi5")
	"${cmd[@]}" >"$T/$tag.out" 2>"$T/$tag.err" || rc=$?
	echo "nested run $tag ($backends) -> exit $rc"
	sed 's/^/  | /' "$T/$tag.err" | head -n 20
	san_check "$tag" "$T/$tag.err"
	[ "$rc" = 0 ] || fail "$tag: nested stat exited $rc"
	return "$rc"
}

# judge TAG: the checks above over the layers that lost nothing; prints a
# table.  Exit 1 on a failed check, 2 when an ftrace layer lost events, 3
# when only another layer did (it is then left out of the comparison).
judge() {
	python3 - "$T" "$1" $backends <<'PY'
import json, sys
d, tag, backends = sys.argv[1], sys.argv[2], sys.argv[3:]
js = {}
for b in backends:
    try:
        js[b] = json.load(open("%s/%s-%s.json" % (d, tag, b)))
    except (OSError, ValueError) as e:
        print("  %s: no JSON (%s)" % (b, e)); sys.exit(1)
bad, lossy = 0, []
for b, j in js.items():
    c, k = j["capture"], j.get("kernel", {})
    print("  %-11s events=%-7d lost=%d order_violations=%d kernel: "
          "voluntary %s/%s involuntary %s/%s (exit_preempt %s) match=%s"
          % (b, c["events"], c["lost"], c["order_violations"],
             k.get("traced_voluntary"), k.get("voluntary"),
             k.get("traced_involuntary"), k.get("involuntary"),
             k.get("exit_preempt"), k.get("match")))
    if j.get("backend") != b:
        print("  %s: JSON says backend %s" % (b, j.get("backend"))); bad += 1
    if c["order_violations"]:
        print("  %s: order violations" % b); bad += 1
    if c["lost"]:
        lossy.append(b)
    elif k.get("match") is not True:
        print("  %s: kernel.match is %s" % (b, k.get("match"))); bad += 1
# multi5 is the innermost command: its process row, from the last layer
inner = js[backends[-1]]
roots = [p["pid"] for p in inner["processes"] if p["comm"] == "multi5"]
if len(roots) != 1:
    print("  no single multi5 process in the %s layer: %s" % (backends[-1], roots))
    sys.exit(1)
root = roots[0]
rows = {}
for b, j in js.items():
    rows[b] = {t["tid"]: (t["comm"], t["voluntary"], t["involuntary"],
                          t["exit_switch"])
               for t in j["threads"] if t.get("tgid") == root}
print("  multi5 pid %d, threads (comm, voluntary, involuntary, exit_switch):" % root)
for tid in sorted(rows[backends[0]]):
    print("    %d %s" % (tid, "  ".join("%s=%s" % (b, rows[b].get(tid)) for b in backends)))
whole = [b for b in backends if b not in lossy]
if lossy:
    print("  lost events, left out of the comparison: %s" % " ".join(lossy))
for b in whole:
    if len(rows[b]) != 5 or any(r[3] != 1 for r in rows[b].values()):
        print("  %s: expected 5 threads of multi5 with one exit switch-out each" % b)
        bad += 1
    if rows[b] != rows[whole[0]]:
        print("  %s: per-thread counts differ from %s" % (b, whole[0])); bad += 1
if bad:
    sys.exit(1)
if "ftrace" in lossy or "ftrace-text" in lossy:
    sys.exit(2)
sys.exit(3 if lossy else 0)
PY
}

verdict=1
for try in 1 2; do
	run_nested "run$try" || break
	verdict=0
	judge "run$try" || verdict=$?
	# A layer that lost events cannot be compared; the machine's load
	# may be to blame, so once more.
	case $verdict in
	2 | 3) [ "$try" = 1 ] && echo "a layer lost events; once more" && continue ;;
	esac
	break
done
case $verdict in
0) ;;
2) fail "an ftrace layer lost events in both runs" ;;
3)
	# ftrace, ftrace-text (and bpf) agreed and matched the kernel, but
	# another backend could not keep up with this machine twice
	not_judged "the layers that lost events" "they lost events in both runs (machine load): the others agreed and matched the kernel"
	;;
*) fail "checks failed (see above)" ;;
esac
# the innermost layer (which lost nothing, or the test failed above)
# against kcount's wait4() rusage of multi5: each layer's kernel.match is
# ctxmon judging itself
if [ "$verdict" = 0 ] || [ "$verdict" = 3 ]; then
	inner=${backends##* }
	kcount_judge "$inner layer" "$T/run$try-$inner.json" "$T/run$try.err" 0 5
fi
finish
