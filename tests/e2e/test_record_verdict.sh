#!/bin/bash
# Issue 45, item 3: one integrity verdict for every reader of a recording.
# A recording cut inside its second and third events chunks and just
# before its end, one
# with a byte flipped inside an events chunk, and one whose capture lost
# events, each read by every command that reads a recording (report,
# script, latency, hist, export, diff): each prints the same one line on
# stderr ('ctxmon CMD: ' and then the same text), carries the same
# "integrity" object in its JSON ("complete": false, where the file stops
# and why, checksum failures, losses per CPU), exits 0, and exits 1 with
# --strict (docs/integrity.md).  The whole recording: no line,
# "complete": true, exit 0 with --strict too.  Before, latency and hist
# said nothing of a cut and exited 0, report's JSON said
# "complete": true, and no two commands worded it alike.  Needs no
# privileges: the recordings are imported from a generated trace.
. "$(dirname "$0")/lib.sh"

[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
command -v python3 >/dev/null || skip "python3 not installed"

# A ping-pong pair over 40,000 events: 3 events chunks (16,384, 16,384
# and 7,232), so the cuts fall in different chunks.  Jittered times (a
# fixed LCG) keep the chunks from compressing to nothing.
NEV=40000
awk -v n=$((NEV / 4)) 'BEGIN { t = 1000; s = 1
for (i = 0; i < n; i++) {
	s = (s * 1103515245 + 12345) % 2147483648; d = (s % 997) / 1e6
	printf "            ping-101     [000] d..2.  %.6f: sched_waking: comm=pong pid=102 prio=120 target_cpu=000\n", t
	printf "            ping-101     [000] d..2.  %.6f: sched_switch: prev_comm=ping prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=pong next_pid=102 next_prio=120\n", t + 0.000005
	printf "            pong-102     [001] d..2.  %.6f: sched_waking: comm=ping pid=101 prio=120 target_cpu=000\n", t + 0.000006 + d
	printf "            pong-102     [000] d..2.  %.6f: sched_switch: prev_comm=pong prev_pid=102 prev_prio=120 prev_state=S ==> next_comm=ping next_pid=101 next_prio=120\n", t + 0.00001 + d
	t += 0.00002 + d
} }' >"$T/pp.txt"
"$CTXMON" import -q "$T/pp.txt" -o "$T/whole.ctxm" 2>"$T/imp.err" ||
	{ fail "import failed: $(cat "$T/imp.err")"; finish; }
(head -n 4000 "$T/pp.txt"; echo "CPU:1 [LOST 123 EVENTS]"; sed -n '4001,8000p' "$T/pp.txt") >"$T/lost.txt"
"$CTXMON" import -q "$T/lost.txt" -o "$T/lost.ctxm" 2>"$T/imp.err" ||
	fail "import of the lossy trace failed: $(cat "$T/imp.err")"

size=$(stat -c %s "$T/whole.ctxm")
# the events chunks (type 2; a metadata chunk may come between them):
# "third" is cut in the middle of the second, "twothirds" in the middle
# of the third, which "flip" damages there; "end" 10 bytes short
layout=$(python3 - "$T/whole.ctxm" <<'EOF'
import struct, sys
b = open(sys.argv[1], 'rb').read()
o = struct.unpack_from('<I', b, 12)[0]
ev = []
while o + 24 <= len(b):
    _, typ, _, stored = struct.unpack_from('<IHHI', b, o)
    if typ == 2:
        ev.append((o, o + 24 + stored // 2))
    o += 24 + stored
if len(ev) < 3:
    sys.exit("fewer than 3 events chunks")
print(ev[2][0], ev[2][1], ev[1][1])
EOF
) || { fail "no events chunk to damage"; finish; }
set -- $layout
chunk=$1 cut1=$3 cut2=$2
head -c "$cut1" "$T/whole.ctxm" >"$T/third.ctxm"
head -c "$cut2" "$T/whole.ctxm" >"$T/twothirds.ctxm"
head -c $((size - 10)) "$T/whole.ctxm" >"$T/end.ctxm"
cp "$T/whole.ctxm" "$T/flip.ctxm"
printf '\x5a' | dd of="$T/flip.ctxm" bs=1 seek="$2" conv=notrunc 2>/dev/null
cmp -s "$T/whole.ctxm" "$T/flip.ctxm" && fail "the flip changed nothing"

# The reading commands, each with its JSON option where it has one
# ("-" none).  diff reads the whole recording against the one under test.
cmds="report script latency hist export diff"
args() { # CMD FILE
	case $1 in
	report | script | latency) echo "$1 -i $2" ;;
	hist) echo "hist -i $2 hist:keys=prev_pid" ;;
	export) echo "export --partial -i $2 -o $T/out.pftrace" ;;
	diff) echo "diff $T/whole.ctxm $2" ;;
	esac
}
jsonkey() { # CMD: where its JSON has the verdict
	case $1 in
	script) echo - ;;
	diff) echo integrity_b ;;
	*) echo integrity ;;
	esac
}

for k in whole third twothirds end flip lost; do
	f=$T/$k.ctxm
	: >"$T/$k.lines"
	: >"$T/$k.json"
	for c in $cmds; do
		# with --json where the command has it: the same line on
		# stderr, and the verdict in the document
		key=$(jsonkey $c)
		json=--json
		[ "$key" = - ] && json=
		rc=0
		$CTXMON $(args $c "$f") $json >"$T/$k.$c.json" 2>"$T/$k.$c.err" || rc=$?
		san_check "$c $k" "$T/$k.$c.err"
		echo "$k: ctxmon $c $json -> exit $rc: $(head -n 1 "$T/$k.$c.err")"
		[ "$rc" = 0 ] || fail "$k: $c exited $rc: $(cat "$T/$k.$c.err")"
		n=$(grep -c "^ctxmon $c: $f: " "$T/$k.$c.err")
		if [ $k = whole ]; then
			[ -s "$T/$k.$c.err" ] && fail "whole: $c says something: $(cat "$T/$k.$c.err")"
		else
			[ "$n" = 1 ] && [ "$(wc -l <"$T/$k.$c.err")" = 1 ] ||
				fail "$k: $c gives $n verdict lines: $(cat "$T/$k.$c.err")"
			# the same text after 'ctxmon CMD: '
			sed -n "s|^ctxmon $c: \\($f: .*\\)|\\1|p" "$T/$k.$c.err" >>"$T/$k.lines"
		fi
		rc=0
		$CTXMON $(args $c "$f") --strict >/dev/null 2>&1 || rc=$?
		want=1
		[ $k = whole ] && want=0
		[ "$rc" = $want ] || fail "$k: $c --strict exited $rc, expected $want"
		[ "$key" = - ] && continue
		python3 - "$T/$k.$c.json" "$key" >>"$T/$k.json" <<'EOF' ||
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps(d[sys.argv[2]], sort_keys=True))
EOF
			fail "$k: $c --json has no \"$key\" object: $(head -c 300 "$T/$k.$c.json")"
	done
	# one line, one JSON object, whoever read the file
	if [ $k != whole ]; then
		[ "$(sort -u "$T/$k.lines" | wc -l)" = 1 ] ||
			fail "$k: the commands' lines differ:$(printf '\n%s' "$(cat "$T/$k.lines")")"
	fi
	[ "$(sort -u "$T/$k.json" | wc -l)" = 1 ] ||
		fail "$k: the commands' JSON verdicts differ:$(printf '\n%s' "$(cat "$T/$k.json")")"
	line=$(head -n 1 "$T/$k.lines")
	python3 - "$k" "$(head -n 1 "$T/$k.json")" "$line" "$size" "$chunk" "$NEV" "$cut1" "$cut2" <<'EOF' || fail "$k: the verdict is wrong"
import json, sys
k, v, line, size, chunk = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
nev, cut1, cut2 = int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
want(set(v) == {"complete", "truncated_at", "damaged_at", "problem",
                "checksum_failures", "events_read", "bytes_read", "lost",
                "lost_records", "lost_unknown", "lost_per_cpu"},
     "fields %s" % sorted(v))
if k == "whole":
    want(v["complete"] is True and v["truncated_at"] is None and
         v["damaged_at"] is None and v["problem"] is None and
         v["events_read"] == nev and v["bytes_read"] == size, "whole: %s" % v)
elif k == "lost":
    want(v["complete"] is False and v["truncated_at"] is None and
         v["lost"] == 123 and v["lost_records"] == 1 and
         v["lost_per_cpu"] == [0, 123], "lost: %s" % v)
    want(line.endswith("incomplete: read to its end; 8001 events read; 0 checksum failures; lost 123 events in 1 record; CPU 1: 123"), line)
elif k == "flip":
    want(v["complete"] is False and v["damaged_at"] == chunk and
         v["truncated_at"] is None and v["checksum_failures"] == 1 and
         v["events_read"] == 32767, "flip: %s" % v)
    want(": incomplete: damaged at offset %d: chunk checksum mismatch, not read past it; 32767 events read; 1 checksum failure; nothing lost" % chunk in line, line)
else:
    cut = {"third": cut1, "twothirds": cut2, "end": size - 10}[k]
    want(v["complete"] is False and v["damaged_at"] is None and
         v["truncated_at"] is not None and v["truncated_at"] <= cut and
         v["bytes_read"] <= cut and v["checksum_failures"] == 0 and
         0 < v["events_read"] <= nev, "%s: %s" % (k, v))
    want(": incomplete: truncated at offset %d: " % v["truncated_at"] in line and
         "; %d events read; 0 checksum failures; nothing lost" % v["events_read"] in line, line)
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF
done

# report's own "capture" object agrees: not complete when the file is not
python3 - "$T" <<'EOF' || fail "report's capture.complete disagrees with the verdict"
import json, sys
ok = True
for k in ("whole", "third", "twothirds", "end", "flip", "lost"):
    d = json.load(open("%s/%s.report.json" % (sys.argv[1], k)))
    if d["capture"]["complete"] != d["integrity"]["complete"]:
        print("  %s: capture.complete %s, integrity.complete %s" %
              (k, d["capture"]["complete"], d["integrity"]["complete"]))
        ok = False
sys.exit(0 if ok else 1)
EOF

# export without --partial refuses a cut or damaged file (exit 1, no
# file), after the same line
for k in third flip; do
	rc=0
	"$CTXMON" export -i "$T/$k.ctxm" -o "$T/refused.pftrace" >/dev/null 2>"$T/refused.err" || rc=$?
	[ "$rc" = 1 ] || fail "$k: export without --partial exited $rc"
	[ -e "$T/refused.pftrace" ] && fail "$k: a refused export left a file"
	grep -qxF "ctxmon export: $(head -n 1 "$T/$k.lines")" "$T/refused.err" ||
		fail "$k: a refused export does not give the verdict line: $(cat "$T/refused.err")"
done
# --strict is for a recording
rc=0
"$CTXMON" latency --strict -a --duration 1 >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "latency --strict without -i exited $rc, expected 2"
finish
