#!/bin/bash
# diff of imports of `perf script` text, which names threads but not their
# processes (issue 45 item 6).  Without pids there is no process to name a
# thread by and no creation order to rank same-named threads in, so diff
# pairs rows by (comm, tid) and says so, in text and in JSON.  Checked on
# tests/data/import/perfscript: two imports of the same text differ in
# nothing; the same text plus one wakeup of a new thread named like the
# workload's (pingpong, a lower tid than theirs: by-name ranks would shift
# and pair different threads, +2931% on main) differs in that row alone;
# both for threads and --per-process.  Needs no privileges.
. "$(dirname "$0")/lib.sh"
[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
command -v python3 >/dev/null || skip "python3 not installed"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")/../data/import" && pwd)/lsan.supp"
D=$(cd "$(dirname "$0")/../data" && pwd)

zcat "$D/import/perfscript/input.gz" >"$T/ps.txt"
cp "$T/ps.txt" "$T/ps2.txt"
# at the trace's last timestamp, so no window grows
last=$(awk 'NF > 4 && $4 ~ /^[0-9]+\.[0-9]+:$/ { t = $4 } END { print t }' "$T/ps.txt")
echo "            perf  5631 [000]  $last       sched:sched_waking: comm=pingpong pid=5000 prio=120 target_cpu=000" >>"$T/ps2.txt"
for k in a b; do
	"$CTXMON" import -q "$T/ps.txt" -o "$T/$k.data" 2>"$T/imp-$k.err" ||
		fail "import $k: $(tail -n 1 "$T/imp-$k.err")"
done
"$CTXMON" import -q "$T/ps2.txt" -o "$T/c.data" 2>"$T/imp-c.err" ||
	fail "import c: $(tail -n 1 "$T/imp-c.err")"

# check NAME B EXTRA [--per-process]: diff a.data B; EXTRA is the only key
# (comma-separated, may be empty) allowed in one side alone; every row in
# both must be equal in every field
check() {
	local name=$1 b=$2 extra=$3
	shift 3
	if ! "$CTXMON" diff -n 0 "$@" "$T/a.data" "$b" >"$T/$name.txt" 2>"$T/$name.err"; then
		fail "$name: diff exited: $(tail -n 1 "$T/$name.err")"
		return
	fi
	san_check "$name" "$T/$name.err"
	grep -q "matched by (comm, tid): pids unknown" "$T/$name.txt" ||
		fail "$name: the text does not say rows are matched by (comm, tid): $(sed -n 3p "$T/$name.txt")"
	# a change: a percentage other than 0, or any OTHER CHANGES entry (on
	# a row other than the one expected on one side only)
	awk -v n="$name" -v x="$extra" 'NR > 5 && (x == "" || index($0, x " ") != 1) { c = 0
		for (i = 1; i <= NF; i++) if ($i ~ /^[+-][0-9]+%$/ && $i !~ /^[+-]0%$/) c = 1
		if ($0 ~ / (switches|voluntary|involuntary|run|wait|sleep|migrations|wakeups|lat_avg|lat_max) [-+]/) c = 1
		if (c) { print n ": changed: " $0; bad = 1 } } END { exit bad }' \
		"$T/$name.txt" >&2 || fail "$name: a row changed in the text (above)"
	if ! "$CTXMON" diff -n 0 --json "$@" "$T/a.data" "$b" >"$T/$name.json" 2>"$T/$name.jerr"; then
		fail "$name: diff --json exited: $(tail -n 1 "$T/$name.jerr")"
		return
	fi
	python3 - "$T/$name.json" "$extra" "$name" <<'PY' || fail "$name: JSON (above)"
import json, sys
d = json.load(open(sys.argv[1]))
extra = set(x for x in sys.argv[2].split(",") if x)
bad = []
if d.get("matched_by") != "comm_tid":
    bad.append("matched_by is %r, not 'comm_tid'" % d.get("matched_by"))
alone = set(r["key"] for r in d["rows"] if not (r["in_a"] and r["in_b"]))
if alone != extra:
    bad.append("rows on one side only: %s, expected %s" % (sorted(alone), sorted(extra)))
for r in d["rows"]:
    if r["in_a"] and r["in_b"] and r["a"] != r["b"]:
        bad.append("%s differs: %s / %s" % (r["key"], r["a"], r["b"]))
if len(d["rows"]) < 20:
    bad.append("only %d rows" % len(d["rows"]))
for b in bad[:10]:
    print("%s: %s" % (sys.argv[3], b), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

check same "$T/b.data" ""
check same-procs "$T/b.data" "" --per-process
check newthread "$T/c.data" "pingpong/5000"
check newthread-procs "$T/c.data" "pingpong/5000" --per-process
finish
