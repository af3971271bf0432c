# tests/e2e/proctree.py - the process tree of a summary's rows, for the
# helpers of lib.sh (tree_sums, proc_tree, thread_checks), which once
# each walked it their own way.


def tree(rows, root, orphans=True):
    """The pids of ROOT and of every process row descending from it by
    "ppid" (ROWS: pid -> row).  With ORPHANS false, rows marked
    "orphaned" are left out, and so is what descends from them only."""
    kids = {}
    for p in rows.values():
        if not orphans and p.get("orphaned"):
            continue
        kids.setdefault(p.get("ppid", -1), []).append(p["pid"])
    keep, todo = {root}, [root]
    while todo:
        for c in kids.get(todo.pop(), ()):
            if c not in keep:
                keep.add(c)
                todo.append(c)
    return keep
