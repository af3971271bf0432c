#!/bin/bash
# How threads end: by their own exit() or exit_group(), by another thread's
# exit_group() (workload groupexit), or by a fatal signal (spin2 killed by
# `timeout -s KILL`); every row's causes add up.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/causes_lib.sh"
skip_unless_capture

causes_stat groupexit -- "$WL/groupexit" || finish
causes_sums "$T/groupexit.json"
f=$T/groupexit.json
line=$(grep '^groupexit: ' "$T/groupexit.err")
[ -n "$line" ] || { fail "no groupexit line on stderr"; finish; }
for who in main:syscall exiter:syscall paused:group spinner:group; do
	name=${who%%:*} want=${who#*:}
	tid=$(echo "$line" | sed -n "s/.* $name=\\([0-9]*\\).*/\\1/p")
	got=$(causes_thread "$f" "$tid" \
		'",".join(k for k, v in c["exit"].items() for _ in range(v)) if c else "no row"')
	echo "  $name $tid: exit by $got (expected $want)"
	[ "$got" = "$want" ] || fail "$name $tid: exit by '$got', expected $want"
done

# timeout kills spin2 (all its threads) with SIGKILL before it is done.
command -v timeout >/dev/null || { echo "no timeout(1): signal case not run"; finish; }
causes_stat killed -- timeout -s KILL 0.3 "$WL/spin2" 5000 || finish
causes_sums "$T/killed.json"
f=$T/killed.json
n=0
for tid in $(causes_tids "$f" spin2); do
	got=$(causes_thread "$f" "$tid" \
		'",".join(k for k, v in c["exit"].items() for _ in range(v))')
	echo "  spin2 thread $tid: exit by $got (expected signal)"
	[ "$got" = signal ] || fail "spin2 thread $tid: exit by '$got', expected signal"
	n=$((n + 1))
done
[ "$n" = 3 ] || fail "expected 3 spin2 threads, saw $n"
finish
