#!/bin/bash
# Two CPU-bound threads pinned to one CPU (workload spin2): their
# involuntary switches are slice ends, except where another task of the
# machine was woken onto the CPU; none is put down to a wakeup of the other
# spinner, which never sleeps (but once, while pinning itself), and every
# preemption put down to a wakeup names its preempter; every row's causes
# add up.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/causes_lib.sh"
skip_unless_capture

causes_stat spin2 -- "$WL/spin2" 500 || finish
causes_sums "$T/spin2.json"

f=$T/spin2.json
tids=$(causes_tids "$f" spin2)
ours=$(echo $tids | tr ' ' ',')
n=0
for tid in $tids; do
	[ "$(causes_thread "$f" "$tid" 'int(t["tid"] == t["tgid"])')" = 1 ] && continue
	n=$((n + 1))
	inv=$(causes_thread "$f" "$tid" 't["involuntary"]')
	slice=$(causes_thread "$f" "$tid" 'c["involuntary"]["slice"]["count"]')
	woken=$(causes_thread "$f" "$tid" \
		'c["involuntary"]["wakeup"]["count"] + c["involuntary"]["wakeup_irq"]["count"]')
	named=$(causes_thread "$f" "$tid" \
		"sum(p['count'] for p in j['pairs'] if p['kind'] == 'preempt' and p['to_tid'] == $tid)")
	by_us=$(causes_thread "$f" "$tid" \
		"sum(p['count'] for p in j['pairs'] if p['kind'] == 'preempt' and p['to_tid'] == $tid and p['from_tid'] in ($ours,) and p['from_tid'] != t['tgid'])")
	# A preempter was woken, so it had slept: the other spinner sleeps
	# only in sched_setaffinity(), when it pins itself.  (The main
	# thread, which sleeps in pthread_join, is not one of the pair.)
	slept=$(causes_thread "$f" "$tid" \
		"sum(r['voluntary'] for r in j['threads'] if r['tid'] in ($ours,) and r['tid'] not in ($tid, r['tgid']))")
	echo "  spinner $tid: involuntary $inv: slice $slice, preempted by a" \
		"woken task $woken (by the workload: $by_us); other causes:" \
		"$(causes_thread "$f" "$tid" '{k: v["count"] for k, v in c["involuntary"].items() if k not in ("slice", "wakeup", "wakeup_irq") and v["count"]}')"
	causes_thread "$f" "$tid" \
		"'    preempters: ' + ', '.join('%d %s x%d (%s)' % (p['from_tid'], p['from_comm'], p['count'], p['ctx']) for p in j['pairs'] if p['kind'] == 'preempt' and p['to_tid'] == $tid)"
	# ... and it is woken once more at its creation (wakeup_new).
	[ "$by_us" -le $((slept + 1)) ] && [ "$by_us" -le 2 ] ||
		fail "spinner $tid: $by_us switches put down to wakeups of the other spinner, which slept $slept times (+1 creation)"
	[ "$named" = "$woken" ] || fail "spinner $tid: $woken wakeup preemptions, $named with their preempter"
	# Other tasks of a busy machine do wake up on that CPU and preempt.
	[ "$inv" -gt 10 ] && [ $((slice * 2)) -ge "$inv" ] ||
		fail "spinner $tid: only $slice of $inv involuntary switches are slice ends"
done
[ "$n" = 2 ] || fail "expected 2 spinners, saw $n"
finish
