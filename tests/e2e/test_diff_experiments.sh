#!/bin/bash
# ctxmon diff of two experiments, A written with --csv, B with --json
# (pingpong 300 against 300, then 600 against 900): for every condition and
# metric, B's runs against A's; Welch's t and p and Mann-Whitney U and p
# equal SciPy's on the per-run rows of the two files (1e-9 relative), and
# the means are the rows' means.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
PY=/usr/bin/python3
$PY -c 'import scipy' 2>/dev/null || skip "no SciPy for $PY (Debian python3-scipy)"

"$CTXMON" experiment -r 6 --no-causes --csv -o "$T/a.csv" \
	--condition x="$WL/pingpong 300" --condition y="$WL/pingpong 600" 2>"$T/a.err" ||
	fail "experiment A: $(cat "$T/a.err")"
"$CTXMON" experiment -r 6 --no-causes --json -o "$T/b.json" \
	--condition x="$WL/pingpong 300" --condition y="$WL/pingpong 900" 2>"$T/b.err" ||
	fail "experiment B: $(cat "$T/b.err")"
san_check experiment "$T/a.err"
rc=0
"$CTXMON" diff --json "$T/a.csv" "$T/b.json" >"$T/d.json" 2>"$T/d.err" || rc=$?
"$CTXMON" diff "$T/a.csv" "$T/b.json" | sed 's/^/  | /'
[ "$rc" = 0 ] || fail "diff exit $rc: $(cat "$T/d.err")"
san_check diff "$T/d.err"

$PY - "$T/a.csv" "$T/b.json" "$T/d.json" <<'PYEOF' || fail "diff of experiments"
import csv, json, math, sys
import numpy as np
from scipy import stats
def load(p):
    rows = [r for r in csv.DictReader(open(p)) if r["status"] == "ok"]
    return rows
A = load(sys.argv[1])
B = [r for r in json.load(open(sys.argv[2]))["runs"] if r["status"] == "ok"]
d = json.load(open(sys.argv[3]))
col = {h.rsplit("_", 1)[0] if h.rsplit("_", 1)[-1] in ("s", "ms", "us") else h: h
       for h in open(sys.argv[1]).readline().strip().split(",")[10:]}
bad = n = 0
def near(w, got, want):
    global bad
    if not abs(got - want) <= 1e-9 * abs(want) + 1e-300:
        print("MISMATCH %s: %r vs SciPy %r" % (w, got, want)); bad += 1
for c in d["comparisons"]:
    h = col[c["metric"]]
    x = np.array([r["metrics"][c["metric"]] for r in B
                  if r["condition"] == c["condition"] and r["metrics"][c["metric"]] is not None])
    y = np.array([float(r[h]) for r in A if r["condition"] == c["condition"] and r[h]])
    w = stats.ttest_ind(x, y, equal_var=False)
    u = stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic", use_continuity=True)
    k = "%s/%s" % (c["condition"], c["metric"])
    near("mean_a " + k, c["mean_a"], float(np.mean(y)))
    near("mean_b " + k, c["mean_b"], float(np.mean(x)))
    near("welch_t " + k, c["welch_t"], float(w.statistic))
    near("welch_p " + k, c["welch_p"], float(w.pvalue))
    near("u " + k, c["u"], float(u.statistic))
    near("u_p " + k, c["u_p"], float(u.pvalue))
    n += 1
print("%d comparisons checked against SciPy" % n)
conds = {c["condition"] for c in d["comparisons"]}
sys.exit(1 if bad or conds != {"x", "y"} else 0)
PYEOF
finish
