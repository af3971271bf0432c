#!/bin/bash
# Issue 3, acceptance 3: loss is reported, never silent.  The ring buffer
# is shrunk to 4 KB per CPU and the reader stalls for the first 300 ms of
# a busy workload: the reserve failures counted in the programs must all
# come out as loss events, each on a CPU, with a window inside the
# capture, and the stream must stay in time order.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bpf_lib.sh"
skip_unless_bpf_check

ncpus=$(getconf _NPROCESSORS_CONF)
for stall in 300 3000; do
	name=lost-$stall
	run_check "$name" -k 4 -S "$stall" -- "$WL/multi5" 20000 20000 300
	[ "$RUN_RC" = 0 ] || { fail "$name: bpf_check exit $RUN_RC"; continue; }
	f=$T/$name.out
	grep '^lost cpu' "$f" | head -n 8 | sed 's/^/  | /'
	lost=$(kv "$f" lost)
	[ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "$name: no loss reported"
	[ "$lost" = "$(kv "$f" bpf_lost)" ] ||
		fail "$name: programs dropped $(kv "$f" bpf_lost), reported $lost"
	[ "$(kv "$f" lost_records)" -gt 0 ] || fail "$name: no loss events"
	for k in order_violations stream_violations cpu_violations; do
		[ "$(kv "$f" $k)" = 0 ] || fail "$name: $k=$(kv "$f" $k)"
	done
	start=$(sed -n 's/^window start=\([0-9]*\).*/\1/p' "$f")
	stop=$(sed -n 's/^window .*stop=\([0-9]*\).*/\1/p' "$f")
	sum=0
	while read -r _ c n s e; do
		c=${c#cpu=} n=${n#count=} s=${s#start=} e=${e#end=}
		sum=$((sum + n))
		[ "$c" -ge 0 ] && [ "$c" -lt "$ncpus" ] ||
			fail "$name: loss on cpu '$c'"
		[ "$s" -le "$e" ] || fail "$name: loss window $s..$e reversed"
		# start is the CPU's last event before the gap (0: none yet)
		[ "$s" = 0 ] || [ "$s" -ge "$start" ] ||
			fail "$name: loss window starts before the capture"
		[ "$e" -ge "$start" ] && [ "$e" -le "$stop" ] ||
			fail "$name: loss window ends at $e, outside $start..$stop"
	done < <(grep '^lost cpu' "$f")
	[ "$sum" = "$lost" ] || fail "$name: loss events add up to $sum, not $lost"
done
finish
