# guest/doctor.sh - `ctxmon doctor --json` on this kernel: every backend
# loads (else the reason it gives is the failure), and the signal-sleep
# probe reached a verdict (S or R), which the stat tests rely on.
. "$GUEST/lib.sh"

"$CTXMON" doctor --json >doctor.json 2>doctor.err
show doctor.err
echo "  $(cat doctor.json)"
for b in bpf bpf-agg perf ftrace ftrace-text perf-switch proc; do
	v=$(grep -o "\"$b\":{\"loads\":[a-z]*,\"why\":\"[^\"]*\"" doctor.json)
	case $v in
	*'"loads":true'*) pass "doctor-loads-$b" ;;
	'') fail "doctor-loads-$b" "no entry in doctor's JSON" ;;
	*) fail "doctor-loads-$b" "$(echo "$v" | sed 's/.*"why"://')" ;;
	esac
done
s=$(jfirst doctor.json sigsleep)
case $s in
"shown S" | "shown R") pass "doctor-sigsleep-probed" ;;
*) fail "doctor-sigsleep-probed" "$s: $(jfirst doctor.json sigsleep_why)" ;;
esac
