#!/bin/bash
# runs: alone
# (keys timed against top's refresh, and the same
# machine-wide view and bpf_stats_enabled as test_top_batch)
# The live view of `ctxmon top`, driven through tmux: start it in a
# 100x40 pane with a ping-pong and two spinners running, then press keys
# and read the pane back after each:
#   (start)  rows sorted by switch rate, ping-pong first (but for loads
#            that were there before)
#   2        sorted by comm          1  sorted by pid
#   5        sorted by involuntary rate, non-increasing
#   / spin2  only spin2's threads    c  the filter cleared
#   t        process rows (PID THR), ping-pong with 2 threads
#   h        the key help            q  gone, pane closed
# and an 80x24 pane: header, titles and rows fit, nothing wraps.
. "$(dirname "$0")/lib.sh"
skip_unless_root
command -v tmux >/dev/null 2>&1 || skip "tmux is not installed"

SOCK=ctxmon-top-$$
tm() {
	tmux -L "$SOCK" "$@"
}
trap 'tm kill-server 2>/dev/null; _cleanup' EXIT

# processes already switching hard (someone else's load) may rank above
# ours: note them before ours starts
heavy_switchers | tr '\n' ' ' >"$T/heavy"
HEAVY=$(cat "$T/heavy")
echo "already switching hard: $HEAVY"

bg "$WL/pingpong" 1000000000
PP=$BG_PID
bg "$WL/spin2" 600000
SP=$BG_PID
sleep 0.3

# check NAME PY: run PY on the pane's text (variable `lines`, and `rows`:
# the split rows under the column titles) until it holds, as top redraws
# after a key (at once) and each period (0.5 s); false for 10 s fails
# NAME.  Before, a fixed 0.4 s after each key, which a loaded machine's
# redraw could outlast.
check() {
	local name=$1 expr=$2 end=$((SECONDS + 10)) quiet=1
	while :; do
		[ "$SECONDS" -lt "$end" ] || quiet=0
		tm capture-pane -p -t top >"$T/$name.pane" 2>/dev/null
		pane_ok "$name" "$expr" "$quiet" && break
		[ "$quiet" = 1 ] || { fail "$name: the pane is not as asked"; break; }
		sleep 0.1
	done
	sed 's/^/  | /' "$T/$name.pane"
}

# pane_ok NAME PY QUIET: PY on $T/NAME.pane; says why not unless QUIET is 1
pane_ok() {
	python3 - "$T/$1.pane" "$2" "$PP" "$SP" "$HEAVY" "$3" <<'PY'
import sys
path, expr, pp, sp = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
heavy = {int(x) for x in sys.argv[5].split()}
quiet = sys.argv[6] == "1"
lines = open(path).read().splitlines()
# the help box may cover the titles: then there are no rows
t = next((i for i, l in enumerate(lines)
          if l.split()[:2] in (["TID", "PID"], ["PID", "THR"])), len(lines))
# columns: TID/PID 7, PID/THR 7, COMM as wide as the title says, 7 more
cw = lines[t].index("SW/s") - 16 - 4 if t < len(lines) else 0
rows = []
for l in lines[t + 1:]:
    f = l[:16].split()
    rest = l[16 + cw:].split()
    if len(f) != 2 or not f[0].isdigit() or len(rest) != 7:
        break
    rows.append([f[0], f[1], l[16:16 + cw].strip()] + rest)
def rate(s):
    m = {"k": 1e3, "M": 1e6}
    return float(s[:-1]) * m[s[-1]] if s[-1] in m else float(s)
ok = eval("(" + expr + ")")
if not ok and not quiet:
    print("check failed: " + expr, file=sys.stderr)
    for r in rows:
        print("  row: %s" % r, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

# keys KEYS...: send them (the check after waits for the redraw)
keys() {
	tm send-keys -t top "$@"
}

# top_gone: the tmux session ended (top quit and the pane closed)
top_gone() {
	! tm has-session -t top 2>/dev/null
}

# wait_rows: until the pane shows column titles and a ping-pong row (the
# first frame comes after loading the backend and one period)
wait_rows() {
	for _ in $(seq 1 100); do
		tm capture-pane -p -t top 2>/dev/null | grep -q "SW/s" &&
			tm capture-pane -p -t top | grep -q pingpong && return 0
		sleep 0.1
	done
	return 1
}

tm new-session -d -s top -x 100 -y 40 "exec $CTXMON top --delay 0.5 2>$T/tui.err" ||
	skip "tmux cannot start a session"
wait_rows || fail "no rows after 10 s"

check start 'len(rows) >= 3 and [int(r[1]) for r in rows if int(r[1]) not in heavy][0] == pp and
	[rate(r[3]) for r in rows] == sorted([rate(r[3]) for r in rows], reverse=True)'
keys 2
check by_comm '"by comm" in lines[0] and [r[2] for r in rows] == sorted(r[2] for r in rows)'
keys 1
check by_pid '[int(r[0]) for r in rows] == sorted(int(r[0]) for r in rows)'
keys 5
check by_invol '"by invol" in lines[0] and
	[rate(r[5]) for r in rows] == sorted([rate(r[5]) for r in rows], reverse=True)'
keys / s p i n 2 Enter
check filter '"filter spin2" in lines[0] and all(r[2] == "spin2" for r in rows) and
	sum(int(r[1]) == sp for r in rows) == 2'
keys c
check cleared '"filter" not in lines[0] and len(rows) >= 3'
keys t
check processes '"processes by" in lines[0] and
	any(int(r[0]) == pp and r[1] == "2" for r in rows)'
keys h
check help 'any("ctxmon top keys" in l for l in lines) and any("sort by column" in l for l in lines)'
keys x
check closed_help 'not any("ctxmon top keys" in l for l in lines)'
keys q
wait_for 10 top_gone || fail "top still runs 10 s after q"
sed 's/^/  ! /' "$T/tui.err"
san_check tui "$T/tui.err"

# 80x24: nothing wider than the pane, the rows fill it
tm new-session -d -s top -x 80 -y 24 "exec $CTXMON top --delay 0.5 2>$T/small.err"
wait_rows || fail "80x24: no rows after 10 s"
tm capture-pane -p -t top >"$T/small.pane"
sed 's/^/  | /' "$T/small.pane"
awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$T/small.pane" ||
	fail "80x24: a line wider than 80"
grep -q "SW/s" "$T/small.pane" || fail "80x24: no column titles"
[ "$(grep -c pingpong "$T/small.pane")" -ge 2 ] || fail "80x24: no ping-pong rows"
keys q
wait_for 10 top_gone || fail "80x24: top still runs 10 s after q"
san_check small "$T/small.err"

finish
