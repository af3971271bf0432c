#!/bin/bash
# Comms are bytes, and JSON must be UTF-8: a program named in UTF-8
# ("zé€slp", 9 bytes, under the 15-byte comm limit) keeps its name in
# `stat --json`, `record` + `report --json` and `export --format chrome-json`,
# as Python's own JSON decoder reads it (the independent check).  Before
# the one JSON string writer, each byte over 0x7f was escaped as a code
# point of its own, so the name came back as "zÃ©â\x82¬slp".
. "$(dirname "$0")/lib.sh"
[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3"
name='zé€slp'
cp /bin/sleep "$T/$name" || fail "cp"
"$CTXMON" stat --json -o "$T/stat.json" -- "$T/$name" 0.1 2>"$T/stat.err" ||
	fail "stat exited: $(tail -n 1 "$T/stat.err")"
san_check stat "$T/stat.err"
"$CTXMON" record -q -o "$T/rec" -- "$T/$name" 0.1 2>"$T/rec.err" ||
	fail "record exited: $(tail -n 1 "$T/rec.err")"
"$CTXMON" report --json -i "$T/rec" >"$T/report.json" 2>"$T/rep.err" ||
	fail "report exited: $(tail -n 1 "$T/rep.err")"
san_check report "$T/rep.err"
"$CTXMON" export --format chrome-json -i "$T/rec" -o "$T/chrome.json" 2>"$T/exp.err" ||
	fail "export exited: $(tail -n 1 "$T/exp.err")"
san_check export "$T/exp.err"
for f in stat.json report.json chrome.json; do
	"$PY" - "$T/$f" "$name" <<'PYEOF' || fail "$f: the name did not come back"
import json, sys
raw = open(sys.argv[1], 'rb').read()
raw.decode('utf-8')            # strict: the file is valid UTF-8
doc = json.loads(raw)
want = sys.argv[2]
found = []
def walk(v):
    if isinstance(v, dict):
        for k, x in v.items():
            if k in ('comm', 'name') and isinstance(x, str) and want in x:
                found.append(x)
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(doc)
print(sys.argv[1].rsplit('/', 1)[-1] + ':', len(found), 'strings hold', want)
sys.exit(0 if found else 1)
PYEOF
done
finish
