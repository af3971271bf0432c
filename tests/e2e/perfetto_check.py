#!/usr/bin/env python3
# perfetto_check.py DECODED.txt - read `protoc --decode=perfetto.protos.Trace`
# text output of a ctxmon export and print what it holds as JSON: switches
# and wakings (compact and plain), per-bundle array lengths that disagree,
# thread and process names, slice begin/end counts per track, flow ids.
# The tests compare these with the recording's own counts.
import json
import re
import sys


def parse(lines):
    """protoc text format -> nested lists of (name, value-or-children)."""
    stack = [[]]
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        m = re.match(r"^(\w+) \{$", line)
        if m:
            node = []
            stack[-1].append((m.group(1), node))
            stack.append(node)
            continue
        m = re.match(r"^(\w+): (.*)$", line)
        if not m:
            raise SystemExit("cannot parse: " + line)
        v = m.group(2)
        if v.startswith('"'):
            v = bytes(v[1:-1], "utf-8").decode("unicode_escape")
        stack[-1].append((m.group(1), v))
    return stack[0]


def get(node, name):
    return [v for k, v in node if k == name]


def main():
    tree = parse(open(sys.argv[1], encoding="utf-8", errors="replace"))
    out = {"packets": 0, "switches": 0, "wakings": 0, "ftrace_events": {},
           "bad_bundles": 0, "threads": {}, "processes": {},
           "slice_begin": 0, "slice_end": 0, "instants": 0,
           "flows": 0, "terminating_flows": 0, "unmatched_flows": 0,
           "unbalanced_tracks": 0, "bundles": 0, "lost_bundles": 0,
           "clock_snapshot": False, "kernel": None, "comm_index_bad": 0}
    flows, ends = set(), set()
    depth = {}
    for k, pkt in tree:
        out["packets"] += 1
        for b in get(pkt, "ftrace_events"):
            out["bundles"] += 1
            if get(b, "lost_events") == ["true"]:
                out["lost_bundles"] += 1
            for ev in get(b, "event"):
                for name, _ in ev:
                    if name not in ("timestamp", "pid"):
                        out["ftrace_events"][name] = \
                            out["ftrace_events"].get(name, 0) + 1
            for cs in get(b, "compact_sched"):
                strs = get(cs, "intern_table")
                n = len(get(cs, "switch_timestamp"))
                for f in ("switch_prev_state", "switch_next_pid",
                          "switch_next_prio", "switch_next_comm_index"):
                    if len(get(cs, f)) != n:
                        out["bad_bundles"] += 1
                w = len(get(cs, "waking_timestamp"))
                for f in ("waking_pid", "waking_target_cpu", "waking_prio",
                          "waking_comm_index", "waking_common_flags"):
                    if len(get(cs, f)) != w:
                        out["bad_bundles"] += 1
                for i in get(cs, "switch_next_comm_index") + \
                        get(cs, "waking_comm_index"):
                    if int(i) >= len(strs):
                        out["comm_index_bad"] += 1
                out["switches"] += n
                out["wakings"] += w
        for pt in get(pkt, "process_tree"):
            for t in get(pt, "threads"):
                name = get(t, "name")
                if name:
                    out["threads"][get(t, "tid")[0]] = name[0]
            for p in get(pt, "processes"):
                cmd = get(p, "cmdline")
                if cmd:
                    out["processes"][get(p, "pid")[0]] = cmd[0]
        if get(pkt, "clock_snapshot"):
            out["clock_snapshot"] = True
        for si in get(pkt, "system_info"):
            for u in get(si, "utsname"):
                out["kernel"] = (get(u, "release") or [None])[0]
        for te in get(pkt, "track_event"):
            typ = get(te, "type")[0]
            tr = get(te, "track_uuid")[0]
            if typ == "TYPE_SLICE_BEGIN":
                out["slice_begin"] += 1
                depth[tr] = depth.get(tr, 0) + 1
            elif typ == "TYPE_SLICE_END":
                out["slice_end"] += 1
                depth[tr] = depth.get(tr, 0) - 1
            elif typ == "TYPE_INSTANT":
                out["instants"] += 1
            flows.update(get(te, "flow_ids"))
            ends.update(get(te, "terminating_flow_ids"))
    out["flows"] = len(flows)
    out["terminating_flows"] = len(ends)
    out["unmatched_flows"] = len(ends - flows)
    out["unbalanced_tracks"] = sum(1 for v in depth.values() if v)
    json.dump(out, sys.stdout)


main()
