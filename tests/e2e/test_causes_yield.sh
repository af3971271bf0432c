#!/bin/bash
# A sched_yield() loop with a yielding partner on the same CPU (workload
# yield): the involuntary switches of both threads are attributed to yield,
# the main thread's once per call it made; every row's causes add up to its
# totals.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/causes_lib.sh"
skip_unless_capture

N=20000
causes_stat yield -- "$WL/yield" "$N" || finish
causes_sums "$T/yield.json"

tids=$(causes_tids "$T/yield.json" yield)
[ "$(echo "$tids" | wc -w)" = 2 ] || fail "expected 2 yield threads, got: $tids"
for tid in $tids; do
	f=$T/yield.json
	leader=$(causes_thread "$f" "$tid" 'int(t["tid"] == t["tgid"])')
	inv=$(causes_thread "$f" "$tid" 't["involuntary"]')
	y=$(causes_thread "$f" "$tid" 'c["involuntary"]["yield"]["count"]')
	echo "  tid $tid (leader $leader): involuntary $inv, yield $y;" \
		"other causes: $(causes_thread "$f" "$tid" \
		'{k: v["count"] for k, v in c["involuntary"].items() if k != "yield" and v["count"]}')"
	# A busy machine may preempt either thread now and then (a tick, a
	# woken kworker): allow 1% of other causes.
	[ $((y * 100)) -ge $((inv * 99)) ] ||
		fail "tid $tid: only $y of $inv involuntary switches attributed to yield"
	if [ "$leader" = 1 ]; then
		# N calls, and a few more while waiting for the helper to start.
		[ "$y" -ge $((N * 99 / 100)) ] && [ "$y" -le $((N + 1000)) ] ||
			fail "tid $tid: $y yields for $N calls to sched_yield"
	fi
done
finish
