#!/usr/bin/env python3
"""json_schema_check.py NAME FILE: the conventions of docs/json.md on one
JSON document (or NDJSON, one per line) that ctxmon wrote.

- the top-level object has "schema_version": 2;
- no id is -1 (or any negative number): unknown ids are null.  An id is a
  member named pid, tid, tgid, ppid, cpu, id or *_tid, *_pid, *_cpu, and
  max_ts_ns and exit_status, wherever it is;
- the booleans of doctor are true/false/null, never 0/1.
Exit 1 with one line per problem on stderr.
"""
import json
import re
import sys

VERSION = 2
ID = re.compile(r"^(pid|tid|tgid|ppid|cpu|id|exit_status|max_ts_ns"
                r"|.*_(tid|pid|cpu))$")
DOCTOR_BOOLS = ("btf", "tp_btf", "ringbuf", "task_storage", "hist_triggers",
                "preempt_rt")


def walk(v, path, bad, skip):
    if isinstance(v, dict):
        for k, x in v.items():
            p = path + "." + k
            if k in skip:
                continue
            if (ID.match(k) and isinstance(x, (int, float))
                    and not isinstance(x, bool) and x < 0):
                bad.append("%s is %s: an unknown id must be null" % (p, x))
            walk(x, p, bad, skip)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            walk(x, "%s[%d]" % (path, i), bad, skip)


def check(doc, bad, name):
    if not isinstance(doc, dict):
        bad.append("not an object")
        return
    if doc.get("schema_version") != VERSION:
        bad.append("schema_version is %r, not %d"
                   % (doc.get("schema_version"), VERSION))
    # Chrome's trace format wants numbers for its pid/tid
    walk(doc, "", bad, ("traceEvents",))
    if name.startswith("doctor"):
        for k in DOCTOR_BOOLS:
            if k not in doc:
                bad.append("doctor: no %r" % k)
            elif doc[k] is not None and not isinstance(doc[k], bool):
                bad.append("doctor: %s is %r, not true/false" % (k, doc[k]))


def main():
    name, path = sys.argv[1], sys.argv[2]
    text = open(path).read()
    bad = []
    try:
        docs = [json.loads(text)]
    except ValueError:
        docs = []
        for n, line in enumerate(l for l in text.splitlines() if l.strip()):
            try:
                docs.append(json.loads(line))
            except ValueError as e:
                bad.append("line %d: not JSON: %s" % (n + 1, e))
    if not docs and not bad:
        bad.append("empty output")
    for d in docs:
        check(d, bad, name)
    seen = set()
    for b in bad:
        if b not in seen and len(seen) < 8:
            print("%s: %s" % (name, b), file=sys.stderr)
        seen.add(b)
    sys.exit(1 if bad else 0)


main()
