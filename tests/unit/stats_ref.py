#!/usr/bin/env python3
# stats_ref.py - reference values for tests/unit/test_stats.c, computed by
# SciPy from the data the test writes on stdin.
#
# Input lines: "x NAME v1 v2 ..." (a data set), then requests:
#   summary NAME | linreg NAMEX NAMEY | welch NAMEA NAMEB | mwu NAMEA NAMEB
#   tsf T DF | tppf P DF | normsf Z | betainc A B X
# Output: "KEY VALUE" lines, KEY naming the request and the field.
import sys

import numpy as np
from scipy import special, stats

data = {}
out = []


def put(key, v):
    out.append("%s %r" % (key, float(v)))


for line in sys.stdin:
    w = line.split()
    if not w:
        continue
    op = w[0]
    if op == "x":
        data[w[1]] = np.array([float(v) for v in w[2:]])
    elif op == "summary":
        x = data[w[1]]
        k = "summary." + w[1]
        put(k + ".mean", np.mean(x))
        put(k + ".sd", np.std(x, ddof=1))
        put(k + ".median", np.median(x))
        put(k + ".min", np.min(x))
        put(k + ".max", np.max(x))
        lo, hi = stats.t.interval(0.95, len(x) - 1, loc=np.mean(x),
                                  scale=stats.sem(x))
        put(k + ".ci_lo", lo)
        put(k + ".ci_hi", hi)
        mad = stats.median_abs_deviation(x, scale="normal")
        put(k + ".mad", mad)
        med = np.median(x)
        nout = int(np.sum(np.abs(x - med) > 3 * mad)) if mad > 0 else 0
        put(k + ".noutliers", nout)
    elif op == "linreg":
        r = stats.linregress(data[w[1]], data[w[2]])
        k = "linreg.%s.%s" % (w[1], w[2])
        put(k + ".slope", r.slope)
        put(k + ".intercept", r.intercept)
        put(k + ".r", r.rvalue)
        put(k + ".r2", r.rvalue ** 2)
        put(k + ".p", r.pvalue)
        put(k + ".slope_se", r.stderr)
        put(k + ".intercept_se", r.intercept_stderr)
    elif op == "welch":
        a, b = data[w[1]], data[w[2]]
        r = stats.ttest_ind(a, b, equal_var=False)
        k = "welch.%s.%s" % (w[1], w[2])
        put(k + ".t", r.statistic)
        put(k + ".p", r.pvalue)
        va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
        put(k + ".df", (va + vb) ** 2 /
            (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1)))
        na, nb = len(a), len(b)
        sp = np.sqrt(((na - 1) * np.var(a, ddof=1) +
                      (nb - 1) * np.var(b, ddof=1)) / (na + nb - 2))
        d = (np.mean(a) - np.mean(b)) / sp
        put(k + ".g", d * (1 - 3 / (4 * (na + nb) - 9)))
    elif op == "mwu":
        r = stats.mannwhitneyu(data[w[1]], data[w[2]],
                               alternative="two-sided",
                               method="asymptotic", use_continuity=True)
        k = "mwu.%s.%s" % (w[1], w[2])
        put(k + ".u", r.statistic)
        put(k + ".p", r.pvalue)
    elif op == "tsf":
        put("tsf.%s.%s" % (w[1], w[2]), stats.t.sf(float(w[1]), float(w[2])))
    elif op == "tppf":
        put("tppf.%s.%s" % (w[1], w[2]),
            stats.t.ppf(float(w[1]), float(w[2])))
    elif op == "normsf":
        put("normsf.%s" % w[1], stats.norm.sf(float(w[1])))
    elif op == "betainc":
        put("betainc.%s.%s.%s" % (w[1], w[2], w[3]),
            special.betainc(float(w[1]), float(w[2]), float(w[3])))
    else:
        sys.exit("stats_ref.py: unknown request " + op)
print("\n".join(out))
