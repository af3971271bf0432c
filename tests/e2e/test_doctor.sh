#!/bin/bash
# ctxmon doctor against what the system itself says: BTF file, the
# perf_event_paranoid sysctl, the tracefs and cgroup2 mounts in
# /proc/mounts, hist triggers in tracefs; the signal-sleep probe reaches a
# verdict; every backend it says loads does load for `stat`.  Then a
# kernel without BTF, simulated with CTXMON_BTF naming a missing file:
# stat says in one line why bpf-agg was not used and falls back to perf,
# which still matches the kernel's getrusage.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

out=$T/doctor.json
"$CTXMON" doctor --json >"$out" 2>"$T/doctor.err" || fail "doctor exited $?"
san_check doctor "$T/doctor.err"
json_check "$out" || { fail "doctor --json is not JSON"; finish; }
cat "$out"; echo

# booleans are JSON's true/false (docs/json.md, schema 2)
want_btf=false
[ -r /sys/kernel/btf/vmlinux ] && want_btf=true
[ "$(json "$out" 'j["btf"]')" = "$want_btf" ] || fail "btf: doctor $(json "$out" 'j["btf"]'), file readable $want_btf"
[ "$(json "$out" 'j["perf_event_paranoid"]')" = "$(cat /proc/sys/kernel/perf_event_paranoid)" ] ||
	fail "perf_event_paranoid differs from the sysctl"
tfs=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
[ "$(json "$out" 'j["tracefs"]')" = "$tfs" ] || fail "tracefs: doctor $(json "$out" 'j["tracefs"]'), /proc/mounts $tfs"
cg=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ "$(json "$out" 'j["cgroup2"]')" = "$cg" ] || fail "cgroup2: doctor $(json "$out" 'j["cgroup2"]'), /proc/mounts $cg"
want_hist=false
[ -e "$tfs/events/sched/sched_switch/hist" ] && want_hist=true
[ "$(json "$out" 'j["hist_triggers"]')" = "$want_hist" ] || fail "hist_triggers: doctor says $(json "$out" 'j["hist_triggers"]')"
case $(json "$out" 'j["sigsleep"]') in
"shown S" | "shown R") ;;
*) fail "signal-sleep probe: $(json "$out" 'j["sigsleep_why"]')" ;;
esac
for b in $(json "$out" '" ".join(k for k, v in j["backends"].items() if v["loads"])'); do
	"$CTXMON" stat --backend "$b" -o /dev/null -- true 2>"$T/$b.err" ||
		fail "doctor says $b loads, stat --backend $b: $(head -n 1 "$T/$b.err")"
done

# no BTF
rc=0
CTXMON_BTF=/nonexistent/vmlinux "$CTXMON" stat --json -o "$T/nobtf.json" -- \
	"$WL/kcount" "$WL/pingpong" 2000 2>"$T/nobtf.err" || rc=$?
sed 's/^/  | /' "$T/nobtf.err"
[ "$rc" = 0 ] || fail "stat without BTF exited $rc"
n=$(grep -c '^ctxmon stat: using the perf backend: bpf-agg not used: .*no kernel BTF at /nonexistent/vmlinux' "$T/nobtf.err")
[ "$n" = 1 ] || fail "expected one line naming the fallback and the missing BTF"
[ "$(json "$T/nobtf.json" 'j["backend"]')" = perf ] || fail "backend $(json "$T/nobtf.json" 'j["backend"]'), expected perf"
[ "$(json "$T/nobtf.json" 'j["kernel"]["match"]')" = true ] || fail "perf fallback: kernel.match false"
finish
