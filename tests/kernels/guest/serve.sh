# guest/serve.sh - ctxmon serve on this kernel: its BPF programs load (the
# tp_btf set where the kernel has BTF, whose task fields and cgroup id are
# plain loads), and a scrape after a ping-pong run in a cgroup of its own
# agrees with the kernel's counters, read by kcount from wait4():
#   process row (the pingpong's pid): voluntary + leader exit == ru_nvcsw (the
#     leader's last switch, counted by the kernel when it was reaped, is an
#     exit switch for serve), involuntary == ru_nivcsw (up to 2 more: a
#     thread preempted after its counters were folded into the process,
#     which serve does not tell apart)
#   cgroup row: the process's switches plus the few of kcount itself
#   lost events 0.
. "$GUEST/lib.sh"

PORT=9747
CG=/sys/fs/cgroup/unified/ctxmon-serve
ip link set lo up 2>/dev/null

if ! mkdir -p "$CG" 2>/dev/null; then
	skip serve "cannot make the cgroup $CG"
	exit 0
fi
# --top 500: a series for every process at once.  With the default 20,
# the slots can all be held by the guest's other tasks (the wget polls,
# kernel threads), and a process that joins when one leaves counts from
# there (docs/metrics.md).  (A process series short of switches while the
# cgroup's had them all, 4975 of 8050 on 6.12-rt and 3342 of 9808 on 6.1,
# was a different fault: a process first seen before its first switch
# joined without the switches of its first interval; fixed, and tested
# on the host by tests/e2e/test_serve_join.sh.)
"$CTXMON" serve --listen 127.0.0.1:$PORT --interval 200 --top 500 2>serve.err &
sp=$!
# up: /healthz answers once the programs are loaded (slow under TCG)
up=0
for i in $(seq 1 120); do
	if wget -q -O healthz.txt "http://127.0.0.1:$PORT/healthz" 2>/dev/null; then
		up=1
		break
	fi
	kill -0 "$sp" 2>/dev/null || break
	sleep 0.5
done
if [ "$up" != 1 ]; then
	show serve.err
	fail serve "no answer on /healthz: $(head -n 1 serve.err)"
	kill "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	rmdir "$CG" 2>/dev/null
	exit 0
fi
sh -c "echo \$\$ > $CG/cgroup.procs && exec \"$WL/kcount\" \"$WL/pingpong\" 5000" \
	>/dev/null 2>kcount.err
# the process's row is folded into "other" 1 s after its exit
# (docs/metrics.md): keep the last scrape that still has it, taken at
# least two collections after the exit
# (by its pid: another ping-pong, an earlier script's, may have a row)
P=$(kcount_get kcount.err pid)
sleep 0.4
: >metrics.txt
for i in $(seq 1 10); do
	wget -q -O m.txt "http://127.0.0.1:$PORT/metrics" 2>/dev/null &&
		grep -q "pid=\"$P\"" m.txt && cp m.txt metrics.txt
	sleep 0.2
done
[ -s metrics.txt ] || cp m.txt metrics.txt 2>/dev/null
kill -INT "$sp" 2>/dev/null
wait "$sp" 2>/dev/null
show serve.err
show kcount.err

V=$(kcount_get kcount.err nvcsw)
I=$(kcount_get kcount.err nivcsw)
# metric{labels} VALUE: the value of the first sample whose line has all
# the given fixed strings
sample() {
	f=$1
	shift
	grep "^$f{" metrics.txt | while read -r l; do
		ok=1
		for s in "$@"; do
			case $l in *"$s"*) ;; *) ok=0 ;; esac
		done
		[ "$ok" = 1 ] && { echo "${l##* }"; break; }
	done
}
pvol=$(sample ctxmon_process_switches_total "pid=\"$P\"" 'kind="voluntary"')
pinv=$(sample ctxmon_process_switches_total "pid=\"$P\"" 'kind="involuntary"')
pexit=$(sample ctxmon_process_switches_total "pid=\"$P\"" 'kind="exit"')
cvol=$(sample ctxmon_cgroup_switches_total 'cgroup="/ctxmon-serve"' 'kind="voluntary"')
lost=$(sample ctxmon_lost_events_total)
[ -n "$lost" ] || lost=$(sed -n 's/^ctxmon_lost_events_total //p' metrics.txt)
echo "  kernel nvcsw=$V nivcsw=$I; serve: process voluntary=$pvol involuntary=$pinv exit=$pexit, cgroup voluntary=$cvol, lost=$lost"
if [ -z "$V" ] || [ -z "$pvol" ] || [ -z "$pinv" ] || [ -z "$cvol" ]; then
	grep -c . metrics.txt | sed 's/^/  metrics lines: /'
	fail serve "missing numbers (kcount or the scrape)"
elif [ "$pvol" -gt "$V" ] || [ $((pvol + ${pexit:-0})) -lt "$V" ]; then
	fail serve "voluntary $pvol (exit ${pexit:-0}) against ru_nvcsw $V"
elif [ "$pinv" -lt "$I" ] || [ "$pinv" -gt $((I + 2)) ]; then
	fail serve "involuntary $pinv against ru_nivcsw $I"
elif [ "$cvol" -lt "$pvol" ] || [ "$cvol" -gt $((pvol + 50)) ]; then
	fail serve "cgroup voluntary $cvol against the process's $pvol"
elif [ "$lost" != 0 ]; then
	fail serve "lost $lost"
else
	pass serve
fi
rmdir "$CG" 2>/dev/null
exit 0
