# guest/lost.sh - loss is reported, never silent: a machine-wide capture
# with 4 KiB per-CPU buffers while a pipe ping-pong runs must report lost
# events (qemu's TCG makes the reader slow enough), with the per-CPU
# counts adding up to the total, and the table must say so.
. "$GUEST/lib.sh"

"$WL/pingpong" 1000000000 >/dev/null 2>&1 &
load=$!
for b in perf ftrace bpf; do
	name=lost-$b
	rc=0
	"$CTXMON" stat --backend "$b" -a -m 4 --duration 2 --json -o "$name.json" \
		2>"$name.err" || rc=$?
	show "$name.err"
	if [ "$rc" != 0 ] || [ ! -s "$name.json" ]; then
		fail "$name" "stat -a exited $rc: $(head -n 1 "$name.err")"
		continue
	fi
	lost=$(jfirst "$name.json" lost)
	per=$(grep -o '"lost_per_cpu":\[[0-9,]*\]' "$name.json" | grep -o '[0-9][0-9,]*' | tr ',' '\n')
	sum=0
	for n in $per; do sum=$((sum + n)); done
	ov=$(jfirst "$name.json" order_violations)
	echo "  $name: lost=$lost per CPU=$(echo $per) order_violations=$ov"
	if [ -z "$lost" ] || [ "$lost" = 0 ]; then
		fail "$name" "no loss reported with 4 KiB buffers under load"
	elif [ "$sum" != "$lost" ]; then
		fail "$name" "lost $lost, per-CPU counts add up to $sum"
	elif [ "$ov" != 0 ]; then
		fail "$name" "$ov order violations"
	else
		pass "$name"
	fi
done
kill "$load" 2>/dev/null
wait "$load" 2>/dev/null
exit 0
