#!/usr/bin/python3
# experiment_check.py JSON - recompute with SciPy, from the per-run rows of
# `ctxmon experiment --json`, every summary, every comparison and the
# regression ctxmon printed, and compare to 1e-9 relative.  Prints one line
# per kind of check with the figures; exits 1 on any mismatch.
import json
import math
import sys

import numpy as np
from scipy import stats

REL = 1e-9
bad = 0
checked = {}


def near(what, got, want):
    global bad
    kind = what.split(":")[0]
    checked[kind] = checked.get(kind, 0) + 1
    if got is None or want is None or (isinstance(want, float) and math.isnan(want)):
        if not (got is None and (want is None or math.isnan(want))):
            print("MISMATCH %s: ctxmon %r, SciPy %r" % (what, got, want))
            bad += 1
        return
    if not abs(got - want) <= REL * abs(want) + 1e-300:
        print("MISMATCH %s: ctxmon %r, SciPy %r (rel %.3g)" %
              (what, got, want, abs(got - want) / abs(want)))
        bad += 1


j = json.load(open(sys.argv[1]))
runs = [r for r in j["runs"] if r["status"] == "ok"]


def values(cond, m):
    return np.array([r["metrics"][m] for r in runs
                     if r["condition"] == cond and r["metrics"][m] is not None])


for s in j["summary"]:
    x = values(s["condition"], s["metric"])
    a = s["all"]
    key = "%s/%s" % (s["condition"], s["metric"])
    if len(x) != a["n"]:
        print("MISMATCH n of %s: %d vs %d" % (key, a["n"], len(x)))
        bad += 1
        continue
    near("mean:" + key, a["mean"], float(np.mean(x)))
    near("median:" + key, a["median"], float(np.median(x)))
    near("min:" + key, a["min"], float(np.min(x)))
    near("max:" + key, a["max"], float(np.max(x)))
    if len(x) < 2:
        continue
    sd = float(np.std(x, ddof=1))
    near("sd:" + key, a["sd"], sd)
    if sd > 0:
        lo, hi = stats.t.interval(0.95, len(x) - 1, loc=np.mean(x),
                                  scale=stats.sem(x))
        near("ci95:" + key, a["ci95"][0], float(lo))
        near("ci95:" + key, a["ci95"][1], float(hi))
    mad = float(stats.median_abs_deviation(x, scale="normal"))
    near("mad:" + key, a["mad"], mad)
    med = np.median(x)
    out = np.abs(x - med) > 3 * mad if mad > 0 else np.zeros(len(x), bool)
    if int(out.sum()) != a["outliers"]:
        print("MISMATCH outliers of %s: %d vs %d" % (key, a["outliers"], out.sum()))
        bad += 1
    t = s["without_outliers"]
    near("trimmed_mean:" + key, t["mean"], float(np.mean(x[~out])))

for c in j["comparisons"]:
    x = values(c["condition"], c["metric"])
    y = values(c["baseline"], c["metric"])
    key = "%s-%s/%s" % (c["condition"], c["baseline"], c["metric"])
    if np.var(x) == 0 and np.var(y) == 0:
        continue
    w = stats.ttest_ind(x, y, equal_var=False)
    near("welch_t:" + key, c["welch"]["t"], float(w.statistic))
    near("welch_p:" + key, c["welch"]["p"], float(w.pvalue))
    u = stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic",
                           use_continuity=True)
    near("mwu_u:" + key, c["mannwhitney"]["u"], float(u.statistic))
    near("mwu_p:" + key, c["mannwhitney"]["p"], float(u.pvalue))

if "regression" in j:
    g = j["regression"]
    xs, ys = [], []
    for r in runs:
        a, b = r["metrics"][g["x"]], r["metrics"][g["y"]]
        if a is not None and b is not None:
            xs.append(a)
            ys.append(b)
    lr = stats.linregress(xs, ys)
    near("linregress:slope", g["slope"], float(lr.slope))
    near("linregress:intercept", g["intercept"], float(lr.intercept))
    near("linregress:r2", g["r2"], float(lr.rvalue ** 2))
    near("linregress:p", g["p"], float(lr.pvalue))
    print("linregress %s~%s over %d runs: slope %.6g intercept %.6g r2 %.6f "
          "p %.3g (SciPy: %.6g %.6g %.6f %.3g)" %
          (g["y"], g["x"], len(xs), g["slope"], g["intercept"], g["r2"],
           g["p"], lr.slope, lr.intercept, lr.rvalue ** 2, lr.pvalue))

print("checked against SciPy (1e-9 relative): " +
      ", ".join("%s %d" % kv for kv in sorted(checked.items())))
sys.exit(1 if bad else 0)
