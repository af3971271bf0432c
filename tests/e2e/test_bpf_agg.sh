#!/bin/bash
# Issue 3, acceptance 4: the aggregation programs (per-thread tables in
# BPF maps, nothing streamed) and the streaming programs attached over the
# same run give the same per-thread numbers: switches in and out,
# voluntary, involuntary, exit switch-outs, migrations, wakeups and
# latency counts exactly; run, wait, sleep and latency sums within what two
# separate clock readings per event explain (bpf_check prints the rows).
# One exception, counted and shown: across a switch-in the kernel traced to
# neither (a thread's "gap"), the two may end a latency or not, each by its
# rule, so a thread's latency counts may be apart by at most its gaps
# (agg_gap_lat; bpf_check.c, gap_explains()).  The counts are also held
# against the command's getrusage (kernel_exact), as test_bpf_backends does.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bpf_lib.sh"
skip_unless_bpf_check

for w in "multi5" "sigsleep 4 1000" "pingpong 20000" "mutex"; do
	name=agg-${w%% *}
	# shellcheck disable=SC2086
	run_check "$name" -A -T -- $(printf '%s/%s' "$WL" "$w")
	f=$T/$name.out
	grep '^agg_\(count\|time\)_diff\|^agg_missing ' "$f" | sed 's/^/  ! /'
	grep '^agg_gap_lat ' "$f" | sed 's/^/  ~ /'
	[ "$RUN_RC" = 0 ] || fail "$name: streaming and aggregation differ (exit $RUN_RC): $(grep -m 2 '^agg_\(count\|time\)_diff\|^agg_missing ' "$f" | tr '\n' ' ')"
	[ "$(kv "$f" agg_threads)" -gt 0 ] 2>/dev/null || fail "$name: no rows"
	for k in vol invol exit; do
		[ "$(kv "$f" traced_$k)" = "$(kv "$f" agg_$k)" ] ||
			fail "$name: $k: stream $(kv "$f" traced_$k), aggregation $(kv "$f" agg_$k)"
	done
	[ "$(kv "$f" agg_rows_dropped)" = 0 ] || fail "$name: rows dropped"
	stream_clean "$name"
	# and both against the kernel's own counts (the command's getrusage):
	# two programs agreeing is not yet the truth
	kernel_exact "$name"
done
finish
