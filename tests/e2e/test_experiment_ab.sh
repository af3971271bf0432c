#!/bin/bash
# ctxmon experiment, two conditions: pingpong 200 vs 800 round trips, 30
# runs each, interleaved.  Every run's traced counts equal the kernel's
# rusage of that run; every mean, sd, median, CI, outlier count, Welch t
# and Mann-Whitney U (statistic and p) equals SciPy's computed from
# ctxmon's own per-run rows (1e-9 relative); the verdict names the switch
# counts as higher in b.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
PY=/usr/bin/python3
$PY -c 'import scipy' 2>/dev/null || skip "no SciPy for $PY (Debian python3-scipy)"

out=$T/ab.json
err=$T/ab.err
rc=0
"$CTXMON" experiment -r 30 --json -o "$out" \
	--condition a="$WL/pingpong 200" --condition b="$WL/pingpong 800" \
	2>"$err" || rc=$?
echo "ctxmon experiment -r 30 --json a='pingpong 200' b='pingpong 800' -> exit $rc"
sed 's/^/  | /' "$err"
san_check experiment "$err"
[ "$rc" = 0 ] || fail "exit status $rc, want 0"
grep -q 'run 1 of' "$err" && fail "progress line written to a non-terminal"
[ -s "$out" ] || { fail "no JSON"; finish; }

# per run: exact against the run's rusage, 30 ok runs per condition
$PY - "$out" <<'PYEOF' || fail "per-run rows"
import json, sys
j = json.load(open(sys.argv[1]))
runs = j["runs"]
bad = 0
for c in ("a", "b"):
    rs = [r for r in runs if r["condition"] == c]
    ok = [r for r in rs if r["status"] == "ok"]
    print("condition %s: %d runs, %d ok" % (c, len(rs), len(ok)))
    if len(ok) != 30:
        bad += 1
order = [r["condition"] for r in runs]
if order[:4] != ["a", "b", "a", "b"]:
    print("runs not interleaved: %s" % order[:4]); bad += 1
for r in runs:
    k = r["kernel"]
    m = r["metrics"]
    if not (k["match"] and k["traced_vol"] == k["ru_nvcsw"]
            and k["traced_invol"] == k["ru_nivcsw"]):
        print("run %s/%d: traced %d/%d, rusage %d/%d" % (r["condition"], r["run"],
              k["traced_vol"], k["traced_invol"], k["ru_nvcsw"], k["ru_nivcsw"]))
        bad += 1
    if not (m["voluntary"] <= k["traced_vol"] <= m["voluntary"] + m["exit"]):
        print("run %s/%d: voluntary %d exit %d vs traced %d" % (r["condition"],
              r["run"], m["voluntary"], m["exit"], k["traced_vol"])); bad += 1
    if r["lost"]:
        print("run %s/%d lost %d events" % (r["condition"], r["run"], r["lost"])); bad += 1
tot = sum(r["kernel"]["ru_nvcsw"] + r["kernel"]["ru_nivcsw"] for r in runs)
print("%d runs: traced = rusage exactly in every one (%d switches in all)" % (len(runs), tot))
for c in ("a", "b"):
    v = [r["metrics"]["voluntary"] for r in runs if r["condition"] == c]
    print("  %s voluntary per run: min %d max %d" % (c, min(v), max(v)))
print("verdict:", j["verdicts"][0])
sys.exit(1 if bad else 0)
PYEOF

$PY "$(dirname "$0")/experiment_check.py" "$out" || fail "statistics differ from SciPy's"

v=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdicts"][0])' "$out")
case $v in
*"voluntary higher"*"involuntary higher"*) ;;
*) fail "verdict does not name the switch counts: $v" ;;
esac
finish
