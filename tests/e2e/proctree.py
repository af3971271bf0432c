# tests/e2e/proctree.py - the process tree of a summary's rows, for the
# helpers of lib.sh (tree_sums, proc_tree, thread_checks), which once
# each walked it their own way.
#
# A row is a process incarnation, keyed (pid, gen): where the pid space
# wraps (a storm of tens of thousands of processes), one pid has several
# rows, and a child's "ppid" or a thread's "tgid" names a pid, not a row.
# It is taken for the incarnation of that pid that had begun when the
# child or thread was first seen: the newest row of that pid whose
# first_ts_ns is not after the child's (the oldest row if none is).
# Keyed by pid alone, the walk once merged 36,737 processes into 32,439.


def key(p):
    return (p["pid"], p.get("gen") or 0)


def _start(r):
    return r.get("first_ts_ns") or 0


class Rows:
    """The process rows of a summary (its "processes" list)."""

    def __init__(self, processes):
        self.rows = {key(p): p for p in processes}
        self.by_pid = {}
        for p in processes:
            self.by_pid.setdefault(p["pid"], []).append(p)
        for v in self.by_pid.values():
            v.sort(key=_start)

    def owner(self, pid, ts):
        """The key of pid's incarnation alive at ts (None if no row)."""
        rows = self.by_pid.get(pid)
        if not rows:
            return None
        best = rows[0]
        for r in rows:
            if _start(r) <= ts:
                best = r
        return key(best)

    def of_thread(self, t):
        """The key of the process row thread row t belongs to."""
        if t.get("tgid") is None:
            return None
        return self.owner(t["tgid"], _start(t))


def tree(rows, root, orphans=True):
    """The keys of the rows of pid ROOT and of every row descending from
    them by "ppid" (ROWS: a Rows).  With ORPHANS false, rows marked
    "orphaned" are left out, and so is what descends from them only."""
    kids = {}
    for k, p in rows.rows.items():
        if not orphans and p.get("orphaned"):
            continue
        if p.get("ppid") is None:
            continue
        parent = rows.owner(p["ppid"], _start(p))
        if parent is not None and parent != k:
            kids.setdefault(parent, []).append(k)
    keep = {key(p) for p in rows.by_pid.get(root, ())}
    todo = list(keep)
    while todo:
        for c in kids.get(todo.pop(), ()):
            if c not in keep:
                keep.add(c)
                todo.append(c)
    return keep
