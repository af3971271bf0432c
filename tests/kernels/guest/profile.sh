# guest/profile.sh - `ctxmon profile --off-cpu` on this kernel, with
# frame-pointer stacks (profblock-fp) and CFI ones (profblock), run under
# kcount: the process's on-CPU time is its exact run time, within 1% +
# 1 ms of its CPU time by wait4() (kcount's cpu_us), and its read() is
# charged 0.5 s +- 25% as [blocked: read] (a frame-pointer walk from
# libc's frameless read() skips wait_for_byte: not checked).
. "$GUEST/lib.sh"

for cg in fp dwarf; do
	name=profile-$cg
	w=profblock
	[ "$cg" = fp ] && w=profblock-fp
	rc=0
	"$CTXMON" profile --off-cpu --call-graph "$cg" --json -o "$name.json" \
		-- "$WL/kcount" "$WL/$w" >"$name.out" 2>"$name.err" || rc=$?
	show "$name.err"
	if [ "$rc" != 0 ] || [ ! -s "$name.json" ]; then
		fail "$name" "profile exited $rc: $(head -n 1 "$name.err")"
		continue
	fi
	pid=$(kcount_get "$name.err" pid)
	cpu=$(kcount_get "$name.err" cpu_us)
	# the rows of "threads" of that process (the stacks' rows have no
	# on_cpu_us)
	on=$(awk -v pid="$pid" '/"on_cpu_us":/ {
		tg = $0; sub(/.*"tgid":/, "", tg); sub(/[^0-9].*/, "", tg)
		if (tg == pid) { v = $0; sub(/.*"on_cpu_us":/, "", v)
			sub(/[^0-9].*/, "", v); s += v; n++ } }
		END { if (n) print s }' "$name.json")
	blocked=$(awk '/\[blocked: read\]/ {
		v = $0; sub(/.*"us":/, "", v); sub(/[^0-9].*/, "", v); s += v }
		END { print s + 0 }' "$name.json")
	echo "  $name: process ${pid:-?} on-CPU ${on:-?} us, its CPU time by wait4() ${cpu:-?} us; blocked in read $blocked us"
	if [ -z "$cpu" ] || [ -z "$on" ]; then
		fail "$name" "no cpu_us from kcount or no thread of $w in the profile"
	elif [ $(( (on > cpu ? on - cpu : cpu - on) * 100 )) -gt $((cpu + 100000)) ]; then
		fail "$name" "on-CPU $on us, the CPU time by wait4() $cpu us (1% + 1 ms)"
	elif [ "$blocked" -lt 375000 ] || [ "$blocked" -gt 625000 ]; then
		fail "$name" "[blocked: read] $blocked us, not 0.5 s +- 25%"
	else
		pass "$name"
	fi
done
exit 0
