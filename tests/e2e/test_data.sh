#!/bin/bash
# The data-driven tier: every tests/data/<case>/ with an input and an
# expected file (see tests/data/README).  The input is imported into a
# recording, `ctxmon report --json` with the case's arguments reads it, and
# the rows it prints must be the expected ones, which were counted by hand
# from the input.  Needs no privileges.
. "$(dirname "$0")/lib.sh"
[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"

DATA=$(cd "$(dirname "$0")/../data" && pwd)
n=0
for dir in "$DATA"/*/; do
	c=$(basename "$dir")
	[ -f "$dir/input" ] && [ -f "$dir/expected" ] || continue
	n=$((n + 1))
	if ! "$CTXMON" import -q "$dir/input" -o "$T/$c.data" 2>"$T/$c.err"; then
		fail "$c: import failed: $(tail -n 2 "$T/$c.err")"
		continue
	fi
	san_check "$c import" "$T/$c.err"
	args=$(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["report"]))' "$dir/expected")
	# shellcheck disable=SC2086
	if ! "$CTXMON" report --json -i "$T/$c.data" $args >"$T/$c.json" 2>"$T/$c.err"; then
		fail "$c: report failed: $(tail -n 2 "$T/$c.err")"
		continue
	fi
	san_check "$c report" "$T/$c.err"
	python3 - "$dir/expected" "$T/$c.json" "$c" <<'PY' || fail "$c: rows differ from the expected ones"
import json, sys
exp = json.load(open(sys.argv[1])); got = json.load(open(sys.argv[2])); case = sys.argv[3]
bad = 0
for table, ident in (("processes", "pid"), ("threads", "tid")):
    if table not in exp:
        continue
    rows = got.get(table, [])
    if len(rows) != len(exp[table]):
        print("%s: %d %s, expected %d" % (case, len(rows), table, len(exp[table])), file=sys.stderr)
        bad += 1
    for e in exp[table]:
        match = [r for r in rows if r.get(ident) == e[ident] and r.get("gen", 0) == e.get("gen", 0)]
        if len(match) != 1:
            print("%s: %s %s=%s gen %s: %d rows" % (case, table, ident, e[ident], e.get("gen", 0), len(match)), file=sys.stderr)
            bad += 1
            continue
        for k, v in e.items():
            if match[0].get(k) != v:
                print("%s: %s %s=%s gen %s: %s is %s, expected %s" % (case, table, ident, e[ident], e.get("gen", 0), k, match[0].get(k), v), file=sys.stderr)
                bad += 1
    print("  %s: %d %s checked" % (case, len(exp[table]), table))
sys.exit(1 if bad else 0)
PY
done
echo "$n case(s)"
[ "$n" -gt 0 ] || fail "no case in $DATA"
finish
