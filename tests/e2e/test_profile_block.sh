#!/bin/bash
# `ctxmon profile --off-cpu` on profblock, built with frame pointers and
# with -O2 -fomit-frame-pointer: the folded stacks charge 0.5 s +- 25% to
# wait_for_byte's [blocked: read] (the writer thread sleeps 0.5 s before
# writing the byte) and to burn_cpu on CPU (it burns 0.5 s of its own CPU
# time, measured by CLOCK_THREAD_CPUTIME_ID); profblock runs under kcount,
# and its on-CPU time is within 1% + 1 ms of its CPU time by wait4() (the
# kernel's exact run time); `ctxmon stat` runs around the profile, and per
# thread the profile's total is within 5% of stat's run + wait + sleep.  The same run writes pprof (decoded by protoc against
# src/profile/profile.proto: totals equal the folded ones) and the SVG flame
# graph (opened in headless Chromium, screenshot kept in the log).  A
# third run has the profile miss every switch-in of profblock's threads.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
SRC=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$WL/profblock" ] && [ -x "$WL/profblock-fp" ] || skip "no profblock workloads in $WL"

# unseen-*: the profile's BPF leaves out every switch to a profiled thread
# from another (CTXMON_PROF_UNSEEN_IN=1), as the kernel leaves out a few
# (6.18 in a Firecracker guest: those from threads of PID 1); its time off
# CPU ends where its run says it came back, and its run counts from birth
for b in profblock-fp profblock unseen-profblock-fp; do
	echo "== $b"
	unseen=0
	case $b in unseen-*) unseen=1 ;; esac
	if ! "$CTXMON" stat --backend bpf --json -o "$T/$b.stat.json" -- \
		env CTXMON_PROF_UNSEEN_IN=$unseen \
		"$CTXMON" profile --off-cpu --json -o "$T/$b.prof.json" \
		--svg "$T/$b.svg" --pprof "$T/$b.pb.gz" -- "$WL/kcount" "$WL/${b#unseen-}" \
		>"$T/$b.out" 2>"$T/$b.err"; then
		fail "$b: ctxmon stat/profile failed: $(tail -n 3 "$T/$b.err")"
		continue
	fi
	san_check "$b" "$T/$b.err"
	# the folded stacks of the same profile, from its JSON
	python3 - "$T/$b.prof.json" >"$T/$b.folded" <<'PY' || fail "$b: no folded"
import json, sys
j = json.load(open(sys.argv[1], encoding="utf-8", errors="replace"))
for s in j["stacks"]:
    fr = [s["comm"]] + s["frames"] + ([s["cause"]] if s["cause"] else [])
    print(";".join(fr), s["us"])
PY
	python3 "$(dirname "$0")/profile_check.py" block "$T/$b.folded" \
		"$T/$b.prof.json" "$T/$b.stat.json" "$T/$b.err" ||
		fail "$b: profile checks"
	echo "  top stacks:"; sort -t' ' -k2 -n -r "$T/$b.folded" | head -n 4 | cut -c1-200
	if command -v protoc >/dev/null; then
		if zcat "$T/$b.pb.gz" | protoc --proto_path="$SRC/src/profile" \
			--decode perftools.profiles.Profile profile.proto \
			>"$T/$b.pprof.txt" 2>"$T/$b.protoc.err"; then
			python3 "$(dirname "$0")/profile_check.py" pprof \
				"$T/$b.pprof.txt" "$T/$b.folded" || fail "$b: pprof checks"
		else
			fail "$b: protoc cannot decode the pprof file: $(head -n 2 "$T/$b.protoc.err")"
		fi
	else
		echo "  (no protoc: pprof not decoded)"
	fi
	chrome=$(command -v chromium || command -v chromium-browser || true)
	if [ -n "$chrome" ]; then
		timeout 120 "$chrome" --headless --no-sandbox --disable-gpu \
			--screenshot="$T/$b.png" --window-size=1200,700 \
			"file://$T/$b.svg" >"$T/$b.chrome.log" 2>&1
		if [ -s "$T/$b.png" ]; then
			echo "  screenshot of the SVG in Chromium: $(stat -c %s "$T/$b.png") bytes"
			mkdir -p /tmp/ctxmon-profile-shots && cp "$T/$b.png" /tmp/ctxmon-profile-shots/
			echo "  (kept as /tmp/ctxmon-profile-shots/$b.png)"
		else
			fail "$b: Chromium made no screenshot of the SVG: $(tail -n 2 "$T/$b.chrome.log")"
		fi
		# the DOM Chromium built from the file holds the functions
		timeout 120 "$chrome" --headless --no-sandbox --disable-gpu \
			--dump-dom "file://$T/$b.svg" >"$T/$b.dom" 2>/dev/null
		for fn in wait_for_byte burn_cpu "[blocked: read]"; do
			grep -qF "$fn" "$T/$b.dom" || fail "$b: $fn not in the SVG's DOM in Chromium"
		done
		grep -q 'class="fr"' "$T/$b.dom" || fail "$b: no frames in the SVG's DOM"
	else
		echo "  (no chromium: SVG not opened)"
	fi
done
finish
