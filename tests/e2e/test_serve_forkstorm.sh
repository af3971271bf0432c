#!/bin/bash
# ctxmon serve under a fork storm (root, BPF, cgroup v2, curl): N short
# processes (/bin/true from a shell loop) in a test cgroup, while serve
# (--top 5) exports the whole machine.
#   - every scrape during the storm has at most top+1 process, cgroup and
#     (victim, culprit) label sets: the series do not grow with the forks;
#   - the storm cgroup's exit switches grow by at least N (each /bin/true
#     ends with one), counted although the processes are gone;
#   - the exited processes are folded (ctxmon_exited_processes_folded);
#   - serve's RSS (release build when CTXMON_REL is given: ASan's
#     quarantine would hide a leak) grows by less than 4 MiB from the
#     first third of the storm to its end.
# STORM_N (default 1500) sets N; the 60 s figures of the report used more.
. "$(dirname "$0")/lib.sh"

serve_needs "BPF programs, cgroups" curl
N=${STORM_N:-1500}
TOP=5
BIN=${CTXMON_REL:-$CTXMON}

NAME=ctxmon-e2e-storm-$$
CG=$cg2/$NAME
cleanup() {
	[ -n "${LOOP:-}" ] && kill -KILL "$LOOP" 2>/dev/null && wait "$LOOP" 2>/dev/null
	[ -n "${SRV:-}" ] && kill -KILL "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	for _ in 1 2 3 4 5; do rmdir "$CG" 2>/dev/null && break; sleep 0.2; done
	_cleanup
}
trap cleanup EXIT
mkdir "$CG" || skip "cannot create a cgroup under $cg2"

serve_start "$BIN" --interval 200 --top $TOP

# scrape I: label sets and the numbers the checks need, one line
scrape() {
	curl -sf "$URL" >"$T/s.txt" || { echo "scrape-failed"; return; }
	awk -v cg="/$NAME" '
		/^#/ { next }
		{ n++ }
		match($0, /pid="[^"]*"/) { pids[substr($0, RSTART, RLENGTH)] = 1 }
		match($0, /^ctxmon_cgroup_[a-z_]*\{cgroup="[^"]*"/) {
			s = substr($0, RSTART, RLENGTH); sub(/.*\{/, "", s); cgs[s] = 1 }
		match($0, /victim="[^"]*",culprit="[^"]*"/) { prs[substr($0, RSTART, RLENGTH)] = 1 }
		index($0, "ctxmon_cgroup_switches_total{cgroup=\"" cg "\",kind=\"exit\"}") == 1 { ex = $2 }
		$1 == "ctxmon_exited_processes_folded_total" { fo = $2 }
		$1 == "ctxmon_resident_memory_bytes" { rss = $2 }
		END {
			for (k in pids) np++; for (k in cgs) nc++; for (k in prs) npr++
			printf "%d %d %d %d %d %d %d\n", n, np, nc, npr, ex + 0, fo + 0, rss
		}' "$T/s.txt"
}

sleep 1
read -r S0 P0 C0 R0 E0 F0 M0 <<<"$(scrape)"
sh -c "echo \$\$ > $CG/cgroup.procs && exec bash -c 'for ((i = 0; i < $N; i++)); do /bin/true; done'" &
LOOP=$!
maxs=$S0 maxp=$P0 maxc=$C0 maxr=$R0 i=0 M1=""
while kill -0 $LOOP 2>/dev/null; do
	read -r S P C R E F M <<<"$(scrape)"
	[ "$S" = scrape-failed ] && { fail "scrape failed during the storm"; break; }
	[ "$S" -gt "$maxs" ] && maxs=$S
	[ "$P" -gt "$maxp" ] && maxp=$P
	[ "$C" -gt "$maxc" ] && maxc=$C
	[ "$R" -gt "$maxr" ] && maxr=$R
	i=$((i + 1))
	[ $i = 3 ] && M1=$M
	sleep 0.3
done
wait $LOOP
LOOP=""
# two collections past the grace time of the last exits
sleep 1.5
read -r S1 P1 C1 R1 E1 F1 M2 <<<"$(scrape)"
[ -n "$M1" ] || M1=$M0
echo "  $N processes in $i scrapes: samples $S0 -> max $maxs -> $S1; label sets max: pid $maxp, cgroup $maxc, pair $maxr (top $TOP)"
echo "  exit switches of the storm cgroup: +$((E1 - E0)); exited processes folded: +$((F1 - F0)); RSS $M0 -> $M1 -> $M2 bytes ($(basename "$BIN"))"
[ "$maxp" -le $((TOP + 1)) ] || fail "$maxp process label sets > top+1"
[ "$maxc" -le $((TOP + 1)) ] || fail "$maxc cgroup label sets > top+1"
[ "$maxr" -le $((TOP + 1)) ] || fail "$maxr pair label sets > top+1"
[ $((E1 - E0)) -ge "$N" ] || fail "exit switches +$((E1 - E0)) < $N processes"
[ $((F1 - F0)) -ge $((N - TOP - 1)) ] || fail "only $((F1 - F0)) exited processes folded"
if [ "$BIN" = "${CTXMON_REL:-}" ]; then
	[ $((M2 - M1)) -lt $((4 << 20)) ] || fail "RSS grew by $((M2 - M1)) bytes"
fi
serve_stop
finish
