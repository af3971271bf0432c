#!/bin/bash
# No tracefs mounted: ctxmon mounts nothing on its own.  In a private mount
# namespace (the machine's mounts are not touched) every tracefs mount is
# taken away, debugfs left in place.  Before, the lookup fell back to
# debugfs' tracing/, and the stat through it made the kernel automount
# tracefs there: the ftrace backend then ran, and a tracefs mount was left
# behind.  Now: the backends that need tracefs (ftrace, ftrace-text, perf)
# fail in one line that says how to mount it, the BPF backends (which do
# not need it) still count, and no tracefs mount appears.  With
# --mount-tracefs, asked for, tracefs is mounted and the ftrace backend runs.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
command -v unshare >/dev/null 2>&1 || skip "no unshare (util-linux)"
grep -q debugfs /proc/mounts || skip "no debugfs mounted: nothing to fall back to"

cat >"$T/inner.sh" <<'EOF'
# in the private namespace: unmount every tracefs, deepest first
awk '$3 == "tracefs" { print $2 }' /proc/mounts | sort -r |
	while read -r d; do umount "$d" || exit 1; done
[ "$(awk '$3 == "tracefs"' /proc/mounts | wc -l)" = 0 ] || exit 1
for b in ftrace ftrace-text perf bpf bpf-agg; do
	rc=0
	"$CTXMON" stat --backend "$b" -a --duration 0.3 -o "$T/$b.out" \
		2>"$T/$b.err" || rc=$?
	echo "$b $rc"
done
echo "tracefs mounts after: $(awk '$3 == "tracefs"' /proc/mounts | wc -l)"
rc=0
"$CTXMON" stat --backend ftrace --mount-tracefs -a --duration 0.3 \
	-o "$T/mnt.out" 2>"$T/mnt.err" || rc=$?
echo "mount-tracefs $rc"
echo "tracefs mounts after --mount-tracefs: $(awk '$3 == "tracefs"' /proc/mounts | wc -l)"
EOF
CTXMON=$CTXMON T=$T unshare -m --propagation private bash "$T/inner.sh" >"$T/inner.out" 2>&1 ||
	fail "the namespace could not be set up: $(tail -n 1 "$T/inner.out")"
sed 's/^/  | /' "$T/inner.out"
for b in ftrace ftrace-text perf; do
	grep -qx "$b 1" "$T/inner.out" || fail "$b without tracefs: not exit 1"
	[ "$(grep -c . "$T/$b.err")" = 1 ] &&
		grep -q "tracefs is not mounted: run 'mount -t tracefs" "$T/$b.err" ||
		fail "$b without tracefs: $(cat "$T/$b.err")"
	san_check "$b" "$T/$b.err"
done
for b in bpf bpf-agg; do
	grep -qx "$b 0" "$T/inner.out" || fail "$b without tracefs: $(tail -n 1 "$T/$b.err")"
	grep -q "capture: $b backend" "$T/$b.out" || fail "$b: no capture line"
	san_check "$b" "$T/$b.err"
done
grep -qx "tracefs mounts after: 0" "$T/inner.out" ||
	fail "a tracefs mount appeared without --mount-tracefs"
grep -qx "mount-tracefs 0" "$T/inner.out" ||
	fail "--mount-tracefs: $(tail -n 1 "$T/mnt.err")"
grep -qx "tracefs mounts after --mount-tracefs: 1" "$T/inner.out" ||
	fail "--mount-tracefs did not mount tracefs once"
finish
