#!/bin/bash
# ctxmon doctor against what the system itself says: BTF file, the
# perf_event_paranoid sysctl, the tracefs and cgroup2 mounts in
# /proc/mounts, hist triggers in tracefs; the signal-sleep probe reaches a
# verdict; every backend it says loads does load for `stat`.  Then a
# kernel without BTF, simulated with CTXMON_BTF naming a missing file:
# stat says in one line why bpf-agg was not used and falls back to perf,
# which still matches the kernel's getrusage.  Last, mount points with a
# space, which /proc/mounts writes as \040: in a mount namespace of its
# own, tracefs and cgroup2 mounted only under such names are found by
# them (a stat with --cgroup relative to the v2 mount reads them).
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

# mount points with a space
if command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
	mkdir -p "$T/trace fs" "$T/cgroup two"
	unshare -m bash -c '
		for m in $(awk '\''$3 == "tracefs" || $3 == "cgroup2" { print $2 }'\'' /proc/mounts | sort -r); do
			umount "$(printf "%b" "$m")" || exit 1
		done
		mount -t tracefs nodev "$1/trace fs" && mount -t cgroup2 none "$1/cgroup two" &&
			"$2" doctor --json && grep -E "tracefs|cgroup2" /proc/mounts >&2 &&
			"$2" stat --cgroup . --json -o "$1/ns-stat.json" -d 0.2
	' _ "$T" "$CTXMON" >"$T/ns.json" 2>"$T/ns.err" || fail "doctor or stat --cgroup in a mount namespace: $(tail -n 1 "$T/ns.err")"
	sed 's/^/  | /' "$T/ns.err"
	[ "$(json "$T/ns-stat.json" 'len(j["threads"])')" -gt 0 ] 2>/dev/null ||
		fail "stat --cgroup . under '$T/cgroup two': no thread" 
	[ "$(json "$T/ns.json" 'j["tracefs"]')" = "$T/trace fs" ] ||
		fail "tracefs at '$T/trace fs': doctor says '$(json "$T/ns.json" 'j["tracefs"]')'"
	[ "$(json "$T/ns.json" 'j["cgroup2"]')" = "$T/cgroup two" ] ||
		fail "cgroup2 at '$T/cgroup two': doctor says '$(json "$T/ns.json" 'j["cgroup2"]')'"
else
	not_judged "mount points with a space" "no mount namespace here (unshare -m)"
fi
finish
