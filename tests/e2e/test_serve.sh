#!/bin/bash
# ctxmon serve against independent truths (root, BPF, cgroup v2, promtool,
# prometheus, curl): a latency-sensitive thread in cgroup a (it sleeps
# 1 ms in nanosleep, again and again) and a CPU hog (two spinners at nice
# -10) in cgroup b, all pinned to CPU 1, under a test parent cgroup.
#   - promtool check metrics passes on the Prometheus text exposition; the
#     OpenMetrics one ends with # EOF;
#   - over a window bounded by SIGSTOP (so nothing moves while both sides
#     are read), each cgroup's voluntary and involuntary switch counters
#     move exactly as much as the sum of its threads' /proc status
#     counters, and its runnable wait as much as their schedstat run_delay
#     (10%), and its switches by cause add up to its switches by kind,
#     a's voluntary ones (90%) blocked in nanosleep, none in sched_yield
#     (neither workload calls it);
#   - a's runnable wait, split over its culprits, adds up (5%), and is
#     charged to b as culprit more than the reverse
#     (other cgroups of the machine may run there too);
#   - a real Prometheus on 127.0.0.1 scrapes it every second and its HTTP
#     API returns a's series and histogram_quantile(0.99, ...) of a's
#     wakeup latency;
#   - 50 concurrent scrapes, 5 clients resetting mid-body and a slow
#     reader: all answered, counters monotonic, 0 lost;
#   - SIGHUP keeps it running, SIGTERM stops it with status 0.
. "$(dirname "$0")/lib.sh"

serve_needs "BPF programs, cgroups" promtool prometheus curl python3 taskset
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (the workloads share CPU 1)"
CHECK="python3 $(dirname "$0")/serve_check.py"

NAME=ctxmon-e2e-serve-$$
CG=$cg2/$NAME
WPIDS=""
cleanup() {
	local p
	for p in $WPIDS; do
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ -n "${PROM:-}" ] && kill "$PROM" 2>/dev/null && wait "$PROM" 2>/dev/null
	[ -n "${SRV:-}" ] && kill -KILL "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	rmdir "$CG/a" "$CG/b" "$CG/c" "$CG" 2>/dev/null
	_cleanup
}
trap cleanup EXIT
mkdir "$CG" "$CG/a" "$CG/b" || skip "cannot create cgroups under $cg2"

# SERVE_ARGS=--raw-tp checks the raw_tp programs the same way
serve_start "$CTXMON" --interval 200 --cgroup "$NAME" ${SERVE_ARGS:-}
grep -q "this machine only" "$T/serve.err" || fail "serve does not say it listens on localhost only"
echo "  $(head -1 "$T/serve.err")"

# the workloads start in their cgroups (moved before exec)
sh -c "echo \$\$ > $CG/a/cgroup.procs && exec taskset -c 1 $WL/sigsleep 1 600000 1000000 1000" &
WA=$!
sh -c "echo \$\$ > $CG/b/cgroup.procs && exec nice -n -10 $WL/spin2 600000 1" &
WB=$!
WPIDS="$WA $WB"

snap() {
	$CHECK get "$URL" >"$T/m$1.json"
	$CHECK procsnap "$CG/a" "$CG/b" >"$T/p$1.json"
}

sleep 1
kill -STOP $WA $WB
serve_quiet "$CG/a" "$CG/b"
snap 0
kill -CONT $WA $WB
sleep 3
kill -STOP $WA $WB
serve_quiet "$CG/a" "$CG/b"
snap 1
kill -CONT $WA $WB
$CHECK window "$T/m0.json" "$T/m1.json" "$T/p0.json" "$T/p1.json" \
	"/$NAME/a" "$CG/a" "/$NAME/b" "$CG/b" || fail "per-cgroup numbers"
# the hog's part is done: two spinners at nice -10 for the rest of the
# test only took CPU from the test running beside this one
kill -KILL $WB 2>/dev/null
wait $WB 2>/dev/null
WPIDS=$WA

# formats, with a busy process whose comm is not UTF-8 (a comm is bytes;
# Prometheus refuses a whole scrape holding a label value that is not
# UTF-8, so the exporter writes U+FFFD for such a byte)
mkdir "$CG/c" || fail "mkdir $CG/c"
ODD="$T/odd$(printf '\377')comm"	# the comm comes from the file name at exec
cp /usr/bin/python3 "$ODD" || fail "cp /usr/bin/python3"
sh -c "echo \$\$ > $CG/c/cgroup.procs && exec \"\$0\" -c 'import time
while True: time.sleep(0.0005)'" "$ODD" &
WC=$!
WPIDS="$WPIDS $WC"
for _ in $(seq 100); do
	grep -q odd "/proc/$WC/comm" 2>/dev/null && break
	sleep 0.05
done
sleep 1
curl -sf "$URL" >"$T/prom.txt" || fail "scrape failed"
grep -aq "pid=\"$WC\",comm=\"odd$(printf '\357\277\275')comm\"" "$T/prom.txt" ||
	fail "the process named odd\\xffcomm is not exported as odd\\ufffdcomm"
promtool check metrics <"$T/prom.txt" >"$T/promtool.out" 2>&1 ||
	{ cat "$T/promtool.out" >&2; fail "promtool check metrics"; }
echo "  promtool check metrics: $(wc -l <"$T/promtool.out") complaints on $(grep -vc '^#' "$T/prom.txt") samples"
curl -sf -D "$T/om.hdr" -H 'Accept: application/openmetrics-text; version=1.0.0; charset=utf-8,text/plain;version=0.0.4;q=0.5' \
	"$URL" >"$T/om.txt" || fail "OpenMetrics scrape failed"
grep -qi '^content-type: application/openmetrics-text; version=1.0.0' "$T/om.hdr" ||
	fail "OpenMetrics not negotiated: $(grep -i content-type "$T/om.hdr")"
[ "$(tail -1 "$T/om.txt")" = "# EOF" ] || fail "OpenMetrics without # EOF"
[ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT/healthz)" = 200 ] ||
	fail "/healthz not ok"

# a real Prometheus
PPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: ctxmon
    static_configs:
      - targets: ['127.0.0.1:$PORT']
YML
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address=127.0.0.1:$PPORT >"$T/prom.log" 2>&1 &
PROM=$!
API=http://127.0.0.1:$PPORT/api/v1
query() { curl -sf --data-urlencode "query=$1" "$API/query"; }
for _ in $(seq 600); do
	curl -sf "http://127.0.0.1:$PPORT/-/ready" >/dev/null && break
	sleep 0.2
done
A_SEL="cgroup=\"/$NAME/a\""
Q99="histogram_quantile(0.99, sum by (le) (rate(ctxmon_cgroup_wakeup_latency_seconds_bucket{$A_SEL}[5s])))"
p99=""
for _ in $(seq 300); do
	p99=$(query "$Q99" | python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
v = float(r[0]["value"][1]) if r else float("nan")
print(v if v == v else "")' 2>/dev/null)
	[ -n "$p99" ] && break
	sleep 0.5
done
n=$(query "ctxmon_cgroup_switches_total{$A_SEL}" | python3 -c 'import json, sys
print(len(json.load(sys.stdin)["data"]["result"]))')
echo "  prometheus: $n series of ctxmon_cgroup_switches_total for a; p99 wakeup latency of a: ${p99:-none} s"
[ "$n" = 3 ] || fail "prometheus has $n switch series of a, not 3 (kinds)"
[ -n "$p99" ] || fail "no histogram_quantile(0.99) of a's wakeup latency"
curl -sf "$API/targets" | python3 -c 'import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"][0]
print("  target health:", t["health"], t["lastError"] or "no error")
sys.exit(t["health"] != "up")' || fail "prometheus cannot scrape ctxmon: $(tail -3 "$T/prom.log")"

# many scrapes at once, some rude
$CHECK storm "$URL" 50 || fail "concurrent scrapes"
kill -0 $SRV 2>/dev/null || fail "serve died"

kill -HUP $SRV
sleep 0.5
kill -0 $SRV 2>/dev/null || fail "SIGHUP stopped serve"
grep -q SIGHUP "$T/serve.err" || fail "SIGHUP not acknowledged"
serve_stop
finish
