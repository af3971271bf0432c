#!/bin/bash
# Issue 17, acceptance 1: `ctxmon export --format perfetto` writes a trace
# that protoc decodes with our subset of Perfetto's schema
# (tests/data/perfetto/ctxmon_perfetto.proto); the sched_switch and
# sched_waking events in it number as many as in the input (counted in the
# ftrace text the recording came from, and with `ctxmon script`); every
# thread that switched has its name; ctxmon's slices are balanced and every
# flow has both ends; memory does not grow with the recording.
. "$(dirname "$0")/lib.sh"
command -v protoc >/dev/null || skip "protoc not installed (Debian: protobuf-compiler)"
[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
D=$(cd "$(dirname "$0")/../data" && pwd)
PROTO="-I $D/perfetto ctxmon_perfetto.proto"
CHECK=$(dirname "$0")/perfetto_check.py

# decode REC NAME: export REC, decode it, summarise into $T/NAME.json
decode() {
	"$CTXMON" export -q -i "$1" -o "$T/$2.pftrace" 2>"$T/$2.err" ||
		fail "export of $2 exited $?: $(tail -n 2 "$T/$2.err")"
	san_check "export $2" "$T/$2.err"
	# shellcheck disable=SC2086
	protoc --decode=perfetto.protos.Trace $PROTO <"$T/$2.pftrace" \
		>"$T/$2.txt" 2>"$T/$2.perr" ||
		fail "protoc cannot decode the $2 export: $(head -n 3 "$T/$2.perr")"
	python3 "$CHECK" "$T/$2.txt" >"$T/$2.json" || fail "$2: checker failed"
	# With a checkout of Perfetto's protos (PERFETTO_PROTOS=its root),
	# the full schema must decode it too, with no field it does not know.
	if [ -n "${PERFETTO_PROTOS:-}" ]; then
		protoc --decode=perfetto.protos.Trace -I "$PERFETTO_PROTOS" \
			protos/perfetto/trace/trace.proto <"$T/$2.pftrace" \
			>"$T/$2.full" 2>"$T/$2.ferr" ||
			fail "$2: Perfetto's full schema cannot decode it: $(head -n 2 "$T/$2.ferr")"
		grep -Eq '^ *[0-9]+: ' "$T/$2.full" &&
			fail "$2: fields unknown to Perfetto's schema"
	fi
}

# expect NAME KEY VALUE
expect() {
	local got
	got=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$T/$1.json" "$2")
	[ "$got" = "$3" ] || fail "$1: $2 is $got, expected $3"
}

# ---- 1. a checked-in ftrace text trace (no privileges needed) ----
TXT=$D/traces/pipe-6.18-sched.txt
"$CTXMON" import -q "$TXT" -o "$T/imp.data" 2>"$T/imp.err" ||
	fail "import exited $?: $(tail -n 2 "$T/imp.err")"
decode "$T/imp.data" imp
sw=$(grep -c ' sched_switch: ' "$TXT")
wk=$(grep -c ' sched_waking: ' "$TXT")
[ "$sw" -gt 100 ] || fail "only $sw switches in $TXT"
expect imp switches "$sw"
expect imp wakings "$wk"
for k in bad_bundles comm_index_bad unmatched_flows unbalanced_tracks; do
	expect imp $k 0
done
expect imp clock_snapshot True
# names: every thread that switched in has one of the names the text
# gives it (a thread renamed by exec has two)
names_ok() {
	python3 - "$1" "$2" <<'PY'
import json, re, sys
names = {}
for line in open(sys.argv[1]):
    pairs = re.findall(r"(?:next|prev)_comm=(\S+) (?:next|prev)_pid=(\d+)", line)
    pairs += re.findall(r"[ :]comm=(\S+) pid=(\d+)", line)
    pairs += [(f.rsplit("/", 1)[-1], t) for f, t in
              re.findall(r"sched_process_exec: filename=(\S+) pid=(\d+)", line)]
    for c, t in pairs:
        if t != "0":
            names.setdefault(t, set()).add(c)
got = json.load(open(sys.argv[2]))["threads"]
bad = [(t, n, got.get(t)) for t, n in names.items() if got.get(t) not in n]
for b in bad[:5]:
    print("tid %s: text says %r, trace has %r" % b, file=sys.stderr)
sys.exit(1 if bad or len(names) < 5 else 0)
PY
}
names_ok "$TXT" "$T/imp.json" || fail "imported trace: thread names missing"

# ---- 2. a live recording (root, tracefs) ----
if [ "$(id -u)" = 0 ] && [ -e /sys/kernel/tracing/events/sched/sched_switch/format ]; then
	"$CTXMON" record -q -o "$T/live.data" --perfetto "$T/rec.pftrace" \
		-- "$WL/multi5" >/dev/null 2>"$T/rec.err" ||
		fail "record exited $?: $(tail -n 2 "$T/rec.err")"
	san_check "record --perfetto" "$T/rec.err"
	decode "$T/live.data" live
	# record --perfetto is export of the file it wrote
	cmp -s "$T/rec.pftrace" "$T/live.pftrace" ||
		fail "record --perfetto differs from export of the recording"
	"$CTXMON" script -i "$T/live.data" >"$T/live.script" 2>/dev/null
	expect live switches "$(grep -c ' sched_switch: ' "$T/live.script")"
	expect live wakings "$(grep -c ' sched_waking: ' "$T/live.script")"
	expect live kernel "$(uname -r)"
	for k in bad_bundles comm_index_bad unmatched_flows unbalanced_tracks; do
		expect live $k 0
	done
	names_ok "$T/live.script" "$T/live.json" || fail "live: thread names missing"
	python3 - "$T/live.json" <<'PY' || fail "live: process name, slices or flows missing"
import json, sys
d = json.load(open(sys.argv[1]))
ok = "multi5" in d["processes"].values() and d["slice_begin"] > 100 and d["flows"] > 100
print("slices %d, flows %d" % (d["slice_begin"], d["flows"]), file=sys.stderr)
sys.exit(0 if ok else 1)
PY

	# ---- 3. bounded memory: 4x the events, about the same peak RSS ----
	# The reader holds a few chunks decoded for its helper threads, as
	# many as there are threads: both runs have two (one helper) and
	# chunks enough to fill them, so only growth with the recording
	# shows.  Every wakeup is kept (-e sched,wakeups): by default a
	# wakeup is kept only when its task is still on its CPU, which the
	# load of the moment decides, and a run 4x as long once held only
	# 2.4x the events.
	if [ -x /usr/bin/time ]; then
		for n in 40000 160000; do
			"$CTXMON" record -q -e sched,wakeups -o "$T/p$n.data" -- \
				"$WL/pingpong" $n >/dev/null 2>&1 ||
				fail "record pingpong $n exited $?"
			# the release build when there is one: the sanitizers'
			# quarantine holds freed memory on purpose
			CTXMON_READ_THREADS=2 /usr/bin/time -f %M -o "$T/p$n.rss" \
				"${CTXMON_REL:-$CTXMON}" export -q \
				--json -i "$T/p$n.data" -o "$T/p$n.pftrace" >"$T/p$n.json" ||
				fail "export of pingpong $n exited $?"
		done
		python3 - "$T" <<'PY' || fail "export memory grows with the recording"
import json, sys
t = sys.argv[1]
ev = [json.load(open("%s/p%d.json" % (t, n)))["events"] for n in (40000, 160000)]
rss = [int(open("%s/p%d.rss" % (t, n)).read().split()[-1]) for n in (40000, 160000)]
print("events %d -> %d, peak RSS %d -> %d KiB" % (ev[0], ev[1], rss[0], rss[1]), file=sys.stderr)
# 3x or more events must not cost more than a few MiB more (sanitizer build)
sys.exit(0 if ev[1] > 3 * ev[0] and rss[1] - rss[0] < 16384 else 1)
PY
	fi
fi
finish
