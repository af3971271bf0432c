#!/bin/bash
# Issue 17, acceptance 3: `ctxmon report --html` (and `stat --html`) write
# one self-contained page: valid HTML (tidy, html5lib), no reference to
# anything outside the file, and in headless Chromium a DOM with the plots
# and the thread names, the kernel comparison and the numbers of
# `report --json`; a 1400x1000 screenshot is taken.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
CHROME=$(command -v chromium || command -v chromium-browser) ||
	skip "chromium not installed (Debian: chromium)"

"$CTXMON" record -q -e all -o "$T/m.data" -- "$WL/multi5" >/dev/null 2>"$T/rec.err" ||
	fail "record exited $?: $(tail -n 2 "$T/rec.err")"
"$CTXMON" report -i "$T/m.data" --html "$T/m.html" >/dev/null 2>"$T/rep.err" ||
	fail "report --html exited $?: $(tail -n 2 "$T/rep.err")"
san_check "report --html" "$T/rep.err"
"$CTXMON" report -i "$T/m.data" --json --per-thread >"$T/m.json" 2>/dev/null ||
	fail "report --json exited $?"
"$CTXMON" stat --html "$T/s.html" -- "$WL/multi5" >/dev/null 2>"$T/stat.err" ||
	fail "stat --html exited $?: $(tail -n 2 "$T/stat.err")"
san_check "stat --html" "$T/stat.err"

for h in m s; do
	[ -s "$T/$h.html" ] || { fail "$h.html not written"; continue; }
	# self-contained: no URL, no external resource of any kind
	if grep -Eiq 'https?:|//[a-z0-9.-]+\.[a-z]{2,}/|<link|src=|@import|url\(' "$T/$h.html"; then
		fail "$h.html references something outside the file:"
		grep -Eio '.{20}(https?:|src=|<link|@import|url\().{20}' "$T/$h.html" | head -n 3 >&2
	fi
	if command -v tidy >/dev/null; then
		tidy -errors -q "$T/$h.html" >"$T/$h.tidy" 2>&1 ||
			fail "tidy finds problems in $h.html: $(head -n 3 "$T/$h.tidy")"
	fi
	if /usr/bin/python3 -c 'import html5lib' 2>/dev/null; then
		/usr/bin/python3 - "$T/$h.html" <<'PY' || fail "html5lib (strict) rejects $h.html"
import html5lib, sys
html5lib.HTMLParser(strict=True).parse(open(sys.argv[1], "rb"))
PY
	fi
	U=$(mktemp -d "$T/chrome.XXXX")
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$U" --dump-dom "file://$T/$h.html" \
		>"$T/$h.dom" 2>"$T/$h.chrome.err" || fail "chromium --dump-dom exited $?"
	U=$(mktemp -d "$T/chrome.XXXX")
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$U" --screenshot="$T/$h.png" \
		--window-size=1400,1000 "file://$T/$h.html" >/dev/null 2>&1 ||
		fail "chromium --screenshot exited $?"
	python3 - "$T/$h.png" <<'PY' || fail "$h: no 1400x1000 screenshot"
import struct, sys
d = open(sys.argv[1], "rb").read()
w, h = struct.unpack(">II", d[16:24])
sys.exit(0 if d[:8] == b"\x89PNG\r\n\x1a\n" and (w, h) == (1400, 1000) and len(d) > 20000 else 1)
PY
	[ -n "${KEEP_SCREENSHOT:-}" ] && cp "$T/$h.png" "$KEEP_SCREENSHOT.$h.png"
done

# the rendered DOM: plots, thread names, status, and report's numbers
python3 - "$T/m.dom" "$T/m.json" "$T/s.dom" <<'PY' || fail "the rendered pages lack plots, names or numbers"
import json, re, sys
dom = open(sys.argv[1]).read()
rep = json.load(open(sys.argv[2]))
sdom = open(sys.argv[3]).read()
bad = []
for page, d in (("report", dom), ("stat", sdom)):
    for pid in ("plot-states", "plot-causes", "plot-cpus", "plot-rate", "thread-table"):
        if 'id="%s"' % pid not in d:
            bad.append("%s: no %s" % (page, pid))
    if len(re.findall(r'<svg class="plot lat"', d)) < 2:
        bad.append("%s: fewer than 2 latency histograms" % page)
    for name in ("multi5", "pong", "spin1", "spin2", "yielder"):
        if ">%s" % name not in d:
            bad.append("%s: thread %s missing" % (page, name))
    if not re.search(r"Kernel comparison: (match|within bound|MISMATCH)", d):
        bad.append("%s: no kernel comparison shown" % page)
    if "No events lost" not in d and not re.search(r"LOSS: \d+ events lost", d):
        bad.append("%s: loss status missing" % page)
# the report page's status says what report --json says
k = rep.get("kernel")
verdict = "MISMATCH" if k and not k["match"] else "within bound" if k and k["bound"] else "match"
if k is None or ("Kernel comparison: %s" % verdict) not in dom:
    bad.append("report: kernel comparison differs from report --json %s" % k)
lost = rep["capture"]["lost"]
if (lost == 0) != ("No events lost" in dom) or (lost and "LOSS: %d events lost" % lost not in dom):
    bad.append("report: loss status differs from report --json (%d lost)" % lost)
# the thread table holds report's numbers (comm, tid, switches, vol, invol)
rows = re.findall(r'<tr><td class="l">([^<]*)</td><td>(\d+)</td><td>-?\d+</td>'
                  r'<td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>', dom)
got = {int(t): (c, int(s), int(v), int(i)) for c, t, s, v, i in rows}
for t in rep["threads"]:
    want = (t["comm"], t["switches"], t["voluntary"], t["involuntary"])
    if got.get(t["tid"]) != want:
        bad.append("tid %d: page %s, report %s" % (t["tid"], got.get(t["tid"]), want))
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
# The plots have no empty row, even where most threads in the recording
# did nothing (a system-wide one): the states plot has the threads with
# time to show, the causes plot those with switch-outs, by report --json
# (the 40 with the most switches).
"$CTXMON" record -q -a -o "$T/a.data" -- sleep 0.3 >/dev/null 2>"$T/reca.err" ||
	fail "record -a exited $?: $(tail -n 2 "$T/reca.err")"
"$CTXMON" report -i "$T/a.data" --html "$T/a.html" >/dev/null 2>/dev/null ||
	fail "report --html (system-wide) exited $?"
"$CTXMON" report -i "$T/a.data" --json --per-thread >"$T/a.json" 2>/dev/null ||
	fail "report --json (system-wide) exited $?"
python3 - "$T/a.html" "$T/a.json" <<'PY' || fail "the plots of a system-wide recording have empty or missing rows"
import json, re, sys
page = open(sys.argv[1]).read()
rep = json.load(open(sys.argv[2]))
bad = []
def plot_rows(d, pid):
    m = re.search(r'<svg id="%s"[^>]*>(.*?)</svg>' % pid, d, re.S)
    return re.findall(r'<g><text[^>]*>[^<]* (\d+)</text>(.*?)</g>', m.group(1), re.S) if m else []
for pid, has in (("plot-states", lambda t: t["run_ns"] + t["wait_ns"] + t["sleep_s_ns"] +
                  t["sleep_d_ns"] + t["sleep_other_ns"] > 0),
                 ("plot-causes", lambda t: t["switches"] > 0)):
    rows = plot_rows(page, pid)
    empty = [t for t, body in rows if "<rect" not in body]
    if empty:
        bad.append("%s: %d of %d rows empty (tids %s)" % (pid, len(empty), len(rows), empty[:5]))
    want = sum(1 for t in rep["threads"] if has(t))
    if len(rows) != min(40, want):
        bad.append("%s: %d rows, report --json has %d threads to show" % (pid, len(rows), want))
    print("%s: %d rows of %d threads, %d to show" % (pid, len(rows), len(rep["threads"]), want))
# the count axis: its gridlines' labels step evenly from 0
m = re.search(r'<svg id="plot-causes"[^>]*>(.*?)</svg>', page, re.S)
ticks = [int(t) for t in re.findall(r'<text x="\d+" y="16" text-anchor="(?:middle|end)">(\d+)</text>', m.group(1))] if m else []
if len(ticks) < 2 or ticks[0] != 0 or len({b - a for a, b in zip(ticks, ticks[1:])}) != 1:
    bad.append("plot-causes: axis labels %s do not step evenly from 0" % ticks)
print("plot-causes axis: %s" % ticks)
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
finish
