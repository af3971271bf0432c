#!/bin/bash
# The other way round (workload pinspin): a sleeper pinned to a spinner's
# CPU sleeps 1 ms 500 times; its voluntary switches are its 500 sleeps, in
# clock_nanosleep, its wakeups come from the timer interrupt, and the
# spinner's preemptions by it are wakeup preemptions from irq context.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/causes_lib.sh"
skip_unless_capture

N=500
causes_stat pinspin -- "$WL/pinspin" "$N" 0 1000 || finish
causes_sums "$T/pinspin.json"

f=$T/pinspin.json
spinner=$(sed -n 's/^pinspin: spinner=\([0-9]*\).*/\1/p' "$T/pinspin.err")
sleeper=$(sed -n 's/^pinspin: .*sleeper=\([0-9]*\).*/\1/p' "$T/pinspin.err")
[ -n "$spinner" ] && [ -n "$sleeper" ] || { fail "no pinspin line on stderr"; finish; }

sleeps=$(causes_thread "$f" "$sleeper" \
	'sum(s["count"] for s in c["voluntary"]["syscalls"] if s["name"] == "clock_nanosleep")')
lat=$(causes_thread "$f" "$sleeper" 'c["latency"]["count"]')
irq=$(causes_thread "$f" "$sleeper" 'c["latency"]["from"]["irq"]')
echo "  sleeper $sleeper: $sleeps switches in clock_nanosleep;" \
	"$lat wakeups, $irq from irq context"
vol=$(causes_thread "$f" "$sleeper" 't["voluntary"]')
pre=$(causes_thread "$f" "$sleeper" \
	'sum(v["count"] for k, v in c["involuntary"].items() if k != "yield")')
echo "  sleeper $sleeper: voluntary $vol, preempted $pre times; voluntary" \
	"switches by syscall: $(causes_thread "$f" "$sleeper" \
		'{s["name"]: s["count"] for s in c["voluntary"]["syscalls"]}')"
# Its other voluntary switches come from start-up (pinning itself to the
# spinner's CPU waits for the migration: sched_setaffinity), not sleeps.
[ "$sleeps" -le "$vol" ] ||
	fail "sleeper: $sleeps switches in clock_nanosleep, more than its $vol voluntary"
# A sleep blocks once, unless the sleeper is preempted between arming its
# timer and schedule() and the timer fires meanwhile: that sleep ends with
# an involuntary switch instead (seen in CI: 499 of 500).
[ "$sleeps" -le "$N" ] && [ $((sleeps + pre)) -ge "$N" ] ||
	fail "sleeper: $sleeps switches in clock_nanosleep and $pre preemptions for $N sleeps"
[ $((irq * 10)) -ge $((N * 9)) ] ||
	fail "sleeper: $irq of its wakeups from irq context, expected (nearly) all $N"

inv=$(causes_thread "$f" "$spinner" 't["involuntary"]')
wirq=$(causes_thread "$f" "$spinner" 'c["involuntary"]["wakeup_irq"]["count"]')
by=$(causes_thread "$f" "$spinner" \
	"sum(p['count'] for p in j['pairs'] if p['kind'] == 'preempt' and p['to_tid'] == $spinner and p['from_tid'] == $sleeper)")
echo "  spinner $spinner: involuntary $inv: $wirq preempted by a task woken" \
	"from irq; $by preemptions by the sleeper; all:" \
	"$(causes_thread "$f" "$spinner" '{k: v["count"] for k, v in c["involuntary"].items() if v["count"]}')"
# How many wakeups preempt at once is the scheduler's choice (EEVDF may
# let the spinner finish its slice); a fifth of them is far from chance.
[ "$by" -ge $((N / 5)) ] ||
	fail "spinner: only $by wakeup preemptions by the sleeper for $N wakeups"
# Not all of them from irq: the sleeper's first wakeup, after pinning
# itself, comes from task context.
wake=$(causes_thread "$f" "$spinner" \
	'sum(v["count"] for k, v in c["involuntary"].items() if k.startswith("wakeup"))')
[ "$by" -le "$wake" ] ||
	fail "spinner: $by preemptions by the sleeper, more than its $wake wakeup preemptions"
finish
