#!/usr/bin/env python3
"""cli_conventions.py INDEX CLI_MD: the rules of docs/cli.md, checked on
every command's option table (INDEX: the output of `ctxmon
--option-index`, written from the tables the commands parse with) and on
docs/cli.md itself.

- a short letter means one long option in every command that has it;
- a long name means one option everywhere (an alias resolves to the same
  canonical name wherever it appears), takes an argument everywhere or
  nowhere, and its argument has one unit (SEC, MS, N, SIZE, HZ, KEY);
- a size is SIZE (a unit suffix accepted), never KB;
- --sort lists its keys in one spelling: no key is a short alias (vol,
  invol, lat, maxlat, migr), and a concept has one name across commands;
- a refused (retired) letter is not also a live letter of its command and
  its hint names the new spelling (a --long option);
- docs/cli.md holds the index verbatim between its markers.
Exit 1 with one line per problem on stderr.
"""
import re
import sys

UNITS = {"SEC", "MS", "N", "SIZE", "HZ", "KEY", "KB", "US", "NS"}
SORT_ALIASES = {"vol", "invol", "lat", "maxlat", "migr"}
BEGIN = "<!-- option-index: begin (ctxmon --option-index) -->"
END = "<!-- option-index: end -->"


def rows(text):
    out = []
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith("| command") \
                or line.startswith("|---"):
            continue
        f = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(f) != 5:
            continue
        out.append(dict(cmd=f[0], short=f[1], long=f[2], arg=f[3], note=f[4]))
    return out


def main():
    index = open(sys.argv[1]).read()
    bad = []
    opts = rows(index)
    if len(opts) < 100:
        bad.append("only %d options in the index" % len(opts))
    canon = {}
    for o in opts:
        if o["long"] and not o["note"].startswith("refused"):
            m = re.match(r"alias of (--\S+)", o["note"])
            canon[(o["cmd"], o["long"])] = m.group(1) if m else o["long"]
    letters, longs, args = {}, {}, {}
    for o in opts:
        if o["note"].startswith("refused"):
            live = [p for p in opts if p["cmd"] == o["cmd"] and
                    p["short"] == o["short"] and p is not o and
                    not p["note"].startswith("refused")]
            if o["short"] and live:
                bad.append("%s: %s is refused and also %s" %
                           (o["cmd"], o["short"], live[0]["long"]))
            if not re.search(r"--[a-z]", o["note"]):
                bad.append("%s: refused %s%s: the hint names no new spelling"
                           % (o["cmd"], o["short"], o["long"]))
            continue
        c = canon[(o["cmd"], o["long"])]
        if o["short"]:
            letters.setdefault(o["short"], {}).setdefault(c, []).append(o["cmd"])
        longs.setdefault(o["long"], {}).setdefault(c, []).append(o["cmd"])
        a = re.sub(r"\[.*\]$", "", o["arg"])
        args.setdefault(c, {}).setdefault(a, []).append(o["cmd"])
        if a == "KB":
            bad.append("%s %s: a size is SIZE (KiB, or with a unit), not KB"
                       % (o["cmd"], o["long"]))
        if o["long"] == "--sort":
            keys = re.sub(r"^one of: ", "", o["note"]).split(", ")
            for k in keys:
                if k in SORT_ALIASES:
                    bad.append("%s --sort lists '%s', an alias" % (o["cmd"], k))
    for what, table in (("letter", letters), ("long name", longs)):
        for k, means in sorted(table.items()):
            if len(means) > 1:
                bad.append("%s %s means %s" % (what, k, "; ".join(
                    "%s in %s" % (m, ",".join(sorted(set(c))))
                    for m, c in sorted(means.items()))))
    for c, forms in sorted(args.items()):
        flag = "" in forms
        if flag and len(forms) > 1:
            bad.append("%s takes an argument in %s, none in %s" % (
                c, ",".join(sorted(set(sum((v for k, v in forms.items() if k), [])))),
                ",".join(sorted(set(forms[""])))))
        units = {k for k in forms if k in UNITS}
        if len(units) > 1:
            bad.append("%s has units %s" % (c, "; ".join(
                "%s in %s" % (u, ",".join(sorted(set(forms[u])))) for u in sorted(units))))
    # one spelling per sort concept: a key listed by one command whose
    # alias is listed by another is caught above; here the names agree
    # with diff's fields where both have the concept
    sorts = {o["cmd"]: set(re.sub(r"^one of: ", "", o["note"]).split(", "))
             for o in opts if o["long"] == "--sort"}
    for cmd, ks in sorted(sorts.items()):
        for k in ks:
            if k in ("voluntary", "involuntary", "lat_avg", "lat_max",
                     "migrations"):
                continue
            if k.startswith(("vol", "invol", "migr")) or k.endswith("lat"):
                bad.append("%s --sort: '%s' is not the one spelling" % (cmd, k))
    if len(sys.argv) > 2:
        md = open(sys.argv[2]).read()
        if BEGIN not in md or END not in md:
            bad.append("docs/cli.md has no option index between its markers")
        else:
            inner = md.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n")
            if inner != index.strip("\n"):
                a, b = inner.splitlines(), index.strip("\n").splitlines()
                diff = [x for x in b if x not in a][:3] + \
                       ["(doc only) " + x for x in a if x not in b][:3]
                bad.append("docs/cli.md's option index differs from the "
                           "tables (make cli-doc rewrites it): %s" % " / ".join(diff))
    for b in bad:
        print(b, file=sys.stderr)
    print("%d options of %d commands: %s" % (
        len(opts), len({o["cmd"] for o in opts}), "%d problems" % len(bad) if bad else "one meaning each"))
    sys.exit(1 if bad else 0)


main()
