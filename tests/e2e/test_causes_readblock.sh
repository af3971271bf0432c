#!/bin/bash
# runs: alone
# (off-CPU time held within 5% of the sleeps the writer
# measured: another test's load on the 2 CPUs delays the reader's wakeups)
# A reader blocks in read() on a pipe while the writer sleeps 2 ms before
# each of its 300 writes (workload readblock): the reader's voluntary
# switches are all attributed to read, once per read that found the pipe
# empty, and its off-CPU time in read is within 5% of the sleeps the writer
# measured for itself; the writer's are in clock_nanosleep; every row's
# causes add up.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/causes_lib.sh"
skip_unless_capture

N=300
causes_stat readblock -- "$WL/readblock" "$N" 2000 || finish
causes_sums "$T/readblock.json"

f=$T/readblock.json
reader=$(sed -n 's/^readblock: reader=\([0-9]*\).*/\1/p' "$T/readblock.err")
slept=$(sed -n 's/^readblock: .*slept_ns=\([0-9]*\).*/\1/p' "$T/readblock.err")
empty=$(sed -n 's/^readblock: .*empty=\([0-9]*\).*/\1/p' "$T/readblock.err")
[ -n "$reader" ] && [ -n "$slept" ] && [ -n "$empty" ] ||
	{ fail "no readblock line on stderr"; finish; }
rd='next((s for s in c["voluntary"]["syscalls"] if s["name"] == "read"), {"count": 0, "sleep_ns": 0, "wait_ns": 0})'
count=$(causes_thread "$f" "$reader" "$rd[\"count\"]")
asleep=$(causes_thread "$f" "$reader" "$rd[\"sleep_ns\"]")
runnable=$(causes_thread "$f" "$reader" "$rd[\"wait_ns\"]")
vol=$(causes_thread "$f" "$reader" 't["voluntary"]')
off=$((asleep + runnable))
echo "  reader $reader: voluntary $vol, in read $count ($empty of its $N reads" \
	"found the pipe empty); off CPU in read $off ns (asleep $asleep +" \
	"runnable $runnable); writer slept $slept ns"
python3 -c "print('  off-CPU in read vs the writer\'s sleeps: %+.2f%% (asleep alone %+.2f%%)' % (100.0 * ($off - $slept) / $slept, 100.0 * ($asleep - $slept) / $slept))"
# A read blocks only if it found the pipe empty (a byte can come between
# the reader's question and its read: allow 2% fewer).
[ "$count" -le "$empty" ] && [ "$count" -ge $((empty * 98 / 100)) ] ||
	fail "reader: $count voluntary switches in read, $empty reads found the pipe empty"
[ "$vol" = "$count" ] || fail "reader: voluntary $vol, but $count of them in read"
[ $(( (off > slept ? off - slept : slept - off) * 100 )) -le $((slept * 5)) ] ||
	fail "reader: off CPU in read $off ns, writer slept $slept ns (more than 5% apart)"

# The writer: a 2 ms nanosleep always blocks.
writer=$(causes_thread "$f" "$reader" 't["tgid"]')
ns=$(causes_thread "$f" "$writer" \
	'sum(s["count"] for s in c["voluntary"]["syscalls"] if s["name"] in ("clock_nanosleep", "nanosleep"))')
echo "  writer $writer: $ns voluntary switches in (clock_)nanosleep"
[ "$ns" = "$N" ] || fail "writer: $ns voluntary switches in nanosleep for $N sleeps"
finish
