#!/bin/bash
# ctxmon experiment --regress elapsed~involuntary on hogvar (fixed work on
# a CPU shared with a hog thread of random length, so both the preemptions
# and the elapsed time vary run to run): slope, intercept, r^2 and the
# slope's p equal scipy.stats.linregress on ctxmon's own per-run rows
# (1e-9 relative).  The SVG is well-formed XML (Python's parser), holds one
# point per ok run and the fitted line, and Chromium renders it
# (screenshot kept in $EXP_SHOTS when set, for a person to look at).
. "$(dirname "$0")/lib.sh"
skip_unless_capture
PY=/usr/bin/python3
$PY -c 'import scipy' 2>/dev/null || skip "no SciPy for $PY (Debian python3-scipy)"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"

rc=0
"$CTXMON" experiment -r 20 --pin 1 --regress elapsed~involuntary \
	--metrics elapsed,involuntary,wait --json -o "$T/r.json" \
	--plot "$T/r.svg" -- "$WL/hogvar" 20 60 2>"$T/r.err" || rc=$?
echo "ctxmon experiment -r 20 --pin 1 --regress elapsed~involuntary -- hogvar 20 60 -> exit $rc"
sed 's/^/  | /' "$T/r.err"
san_check experiment "$T/r.err"
[ "$rc" = 0 ] || fail "exit status $rc"
$PY "$(dirname "$0")/experiment_check.py" "$T/r.json" || fail "regression differs from SciPy's"

$PY - "$T/r.svg" "$T/r.json" <<'PYEOF' || fail "SVG content"
import json, sys
import xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
j = json.load(open(sys.argv[2]))
ok = [r for r in j["runs"] if r["status"] == "ok"]
reg = [g for g in root.iter(ns + "g") if g.get("id") == "regression"]
if len(reg) != 1:
    sys.exit("no regression plot")
pts = list(reg[0].iter(ns + "circle"))
fit = [g for g in reg[0].iter(ns + "g") if g.get("class") == "fit"]
texts = " ".join(t.text or "" for t in reg[0].iter(ns + "text"))
print("SVG: %d points for %d ok runs, %d fitted line; axis labels: %s" %
      (len(pts), len(ok), len(fit), "elapsed time (s)" in texts and "involuntary switches" in texts))
if len(pts) != len(ok) or len(fit) != 1 or len(list(fit[0].iter(ns + "line"))) != 1:
    sys.exit(1)
if "elapsed time (s)" not in texts or "involuntary switches" not in texts:
    sys.exit("axis labels missing")
PYEOF

if command -v chromium >/dev/null; then
	prof=$(mktemp -d)
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$prof" \
		--screenshot="$T/r.png" --window-size=1200,900 "file://$T/r.svg" \
		>/dev/null 2>&1
	rm -rf "$prof"
	if [ -s "$T/r.png" ]; then
		echo "chromium rendered $(stat -c %s "$T/r.png") bytes of PNG"
		[ -z "${EXP_SHOTS:-}" ] || cp "$T/r.png" "$EXP_SHOTS/regress.png"
	else
		fail "chromium made no screenshot of the SVG"
	fi
else
	echo "chromium not installed: screenshot not made"
fi
finish
