# guest/doctor.sh - `ctxmon doctor` on this kernel: every backend loads
# (else the reason it gives is the failure), and the signal-sleep probe
# reached a verdict (S or R), which the stat tests rely on.  Reads the
# report /init saved in /tmp/doctor.txt (running doctor costs seconds
# under TCG), else runs it.
. "$GUEST/lib.sh"

d=/tmp/doctor.txt
[ -s "$d" ] || { d=doctor.txt; "$CTXMON" doctor >"$d" 2>&1; }
for b in bpf bpf-agg perf ftrace ftrace-text perf-switch proc; do
	v=$(sed -n "s/^  $b  *\\(loads\\|no: .*\\)$/\\1/p" "$d" | head -n 1)
	case $v in
	loads) pass "doctor-loads-$b" ;;
	'') fail "doctor-loads-$b" "no line for it in doctor's report" ;;
	*) fail "doctor-loads-$b" "$v" ;;
	esac
done
s=$(sed -n 's/^  signal-cut sleep  *//p' "$d")
case $s in
"shown S:"* | "shown R:"*) pass "doctor-sigsleep-probed" ;;
*) fail "doctor-sigsleep-probed" "${s:-no signal-cut sleep line}" ;;
esac
# PREEMPT_RT, as doctor found it (/sys/kernel/realtime, uname -v), against
# the package's name: Debian's PREEMPT_RT flavour is "-rt-"
rt=$(sed -n 's/^  PREEMPT_RT  *\([a-z]*\).*/\1/p' "$d")
case $(uname -r) in
*-rt-*) want=yes ;;
*) want=no ;;
esac
if [ "$rt" = "$want" ]; then
	pass "doctor-preempt-rt"
else
	fail "doctor-preempt-rt" "doctor says '${rt:-no PREEMPT_RT line}', want $want for $(uname -r)"
fi
