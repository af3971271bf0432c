#!/bin/bash
# stat --cgroup (root, BPF, cgroup v2): a pipe ping-pong inside a test
# cgroup, another one outside it; `stat -a --cgroup` must show exactly the
# threads the kernel lists in the cgroup's cgroup.threads, with both the
# counting (bpf-agg) and the streaming (bpf) backend; --per-cgroup rolls
# them into one row named by the cgroup; a backend that cannot filter must
# refuse in one line.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (BPF programs, cgroups)"
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$cg2" ] && [ -w "$cg2" ] || skip "no writable cgroup v2 mount"
skip_unless_tracefs

NAME=ctxmon-e2e-statcg-$$
CG=$cg2/$NAME
cleanup() {
	for p in ${IN:-} ${OUT:-}; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	for _ in 1 2 3 4 5; do rmdir "$CG" 2>/dev/null && break; sleep 0.2; done
	_cleanup
}
trap cleanup EXIT
mkdir "$CG" || skip "cannot create a cgroup under $cg2"

sh -c "echo \$\$ > $CG/cgroup.procs && exec $WL/pingpong 1000000000" &
IN=$!
"$WL/pingpong" 1000000000 &
OUT=$!
sleep 0.5
truth=$(sort -n "$CG/cgroup.threads" | tr '\n' ' ')
outside=$(ls /proc/$OUT/task | sort -n | tr '\n' ' ')

for be in bpf-agg bpf; do
	"$CTXMON" stat -a --cgroup "$NAME" --backend $be --duration 1 \
		--per-thread --json -n 0 >"$T/$be.json" 2>"$T/$be.err" ||
		{ cat "$T/$be.err" >&2; fail "$be: stat failed"; continue; }
	got=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(str(t["tid"]) for t in sorted(d["threads"], key=lambda t: t["tid"])
      if t["switches"] > 0 and not t["folded"]) + " ")' "$T/$be.json")
	echo "  $be: threads shown: $got; cgroup.threads: $truth; outside: $outside"
	[ "$got" = "$truth" ] || fail "$be: --cgroup shows [$got], the cgroup holds [$truth]"
	san_check "stat $be" "$T/$be.err"
done

# --per-cgroup: the cgroup's threads rolled up into one row named by it
"$CTXMON" stat -a --cgroup "$NAME" --per-cgroup --duration 1 --json \
	>"$T/pc.json" 2>"$T/pc.err" || fail "--per-cgroup failed"
pc=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%s:%d:%d" % (p["comm"], p["nthreads"], p["switches"]) for p in d["processes"]))' "$T/pc.json")
echo "  --per-cgroup rows (path:threads:switches): $pc"
case "$pc" in
"/$NAME:$(wc -w <"$CG/cgroup.threads"):"[1-9]*) ;;
*) fail "--per-cgroup: [$pc], expected one row /$NAME with the cgroup's $(wc -w <"$CG/cgroup.threads") threads" ;;
esac

"$CTXMON" stat -a --cgroup "$NAME" --backend perf --duration 0.2 >/dev/null 2>"$T/perf.err"
rc=$?
echo "  --backend perf: status $rc, $(cat "$T/perf.err")"
[ $rc != 0 ] && [ "$(wc -l <"$T/perf.err")" = 1 ] && grep -q "cannot filter by cgroup" "$T/perf.err" ||
	fail "perf with --cgroup: status $rc, '$(cat "$T/perf.err")'"
"$CTXMON" stat -a --cgroup no-such-cgroup-$$ --duration 0.2 >/dev/null 2>"$T/bad.err"
rc=$?
echo "  missing cgroup: status $rc, $(cat "$T/bad.err")"
[ $rc != 0 ] && [ "$(wc -l <"$T/bad.err")" = 1 ] || fail "a missing cgroup: status $rc"
# a file of the mount is no cgroup: before, its handle was the filter and
# the capture said only 'has no process to watch'
"$CTXMON" stat -a --cgroup cgroup.procs --duration 0.2 >/dev/null 2>"$T/file.err"
rc=$?
echo "  a file as the cgroup: status $rc, $(cat "$T/file.err")"
[ $rc = 2 ] && [ "$(wc -l <"$T/file.err")" = 1 ] &&
	grep -q "is not a directory" "$T/file.err" ||
	fail "cgroup.procs as the cgroup: status $rc"
"$CTXMON" stat --cgroup "$NAME" -- true >/dev/null 2>"$T/cmd.err"
rc=$?
echo "  --cgroup with a command: status $rc"
[ $rc = 2 ] && [ "$(wc -l <"$T/cmd.err")" = 1 ] || fail "--cgroup with a command: status $rc"
finish
