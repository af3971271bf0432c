# guest/nobtf.sh - a kernel without BTF, simulated with CTXMON_BTF naming a
# missing file: stat must say in one line why bpf-agg was not used and
# which backend it used instead, and that backend must match the kernel
# (stderr: that line, then stat's verdict and run time lines, nothing
# else);
# asking for bpf must fail with one line naming the missing BTF; doctor
# must report no BTF.
. "$GUEST/lib.sh"

export CTXMON_BTF=/nonexistent/vmlinux
rc=0
"$CTXMON" stat --json -o nobtf.json -- "$WL/pingpong" 2000 2>nobtf.err || rc=$?
show nobtf.err
b=$(jfirst nobtf.json backend)
match=$(jfirst nobtf.json match)
n=$(grep -c '^ctxmon stat: using the .* backend: bpf-agg not used: .*no kernel BTF at /nonexistent/vmlinux' nobtf.err)
if [ "$rc" != 0 ]; then
	fail nobtf-fallback "stat exited $rc"
elif [ "$n" != 1 ] || [ "$(grep -c . nobtf.err)" != 3 ] ||
	! sed -n 1p nobtf.err | grep -q '^ctxmon stat: using the' ||
	! sed -n 2p nobtf.err | grep -q '^kernel counters: .*(traced vs getrusage: match)$' ||
	! sed -n 3p nobtf.err | grep -q '^run time: traced .*, getrusage CPU time '; then
	fail nobtf-fallback "expected on stderr exactly the one-line reason (the fallback, the missing BTF), then stat's verdict line and its run time line"
elif [ "$b" != perf ] || [ "$match" != true ]; then
	fail nobtf-fallback "backend $b, kernel.match $match (expected perf, true)"
else
	pass nobtf-fallback
fi

rc=0
"$CTXMON" stat --backend bpf -- true 2>bpf.err || rc=$?
show bpf.err
if [ "$rc" = 0 ] || [ "$(grep -c . bpf.err)" != 1 ] ||
	! grep -q 'no kernel BTF at /nonexistent/vmlinux' bpf.err; then
	fail nobtf-bpf-refused "exit $rc; expected a failure and one line naming the missing BTF"
else
	pass nobtf-bpf-refused
fi

"$CTXMON" doctor --no-probe --json >doctor.json 2>&1
if [ "$(jfirst doctor.json btf)" = false ]; then
	pass nobtf-doctor
else
	fail nobtf-doctor "doctor says btf=$(jfirst doctor.json btf)"
fi
