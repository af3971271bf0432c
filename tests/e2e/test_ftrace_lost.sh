#!/bin/bash
# A tiny instance buffer (-m 4: a few pages per CPU) and a burst of
# switches (pingpong): the ftrace backends must say what they lost, where
# and when, and keep the stream in order.
#   - stat --json: capture.lost > 0, lost_per_cpu adds up to it,
#     lost_records > 0, complete false, order_violations 0;
#   - through the library (a small program built here against the public
#     API): every lost record names a CPU, its window starts at that CPU's
#     previous event and ends no later than its next one, the counts add up
#     to the session's totals, and the stream never goes back in time;
#     the perf backend's rings too.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

REPO=$(cd "$(dirname "$0")/../.." && pwd)
LIBA=$(dirname "$CTXMON")/libctxmon.a
N=200000

# ---- 1. stat --json ----
for be in ftrace ftrace-text; do
	rc=0
	"$CTXMON" stat --backend "$be" -m 4 --json -o "$T/$be.json" -- \
		"$WL/pingpong" "$N" 2>"$T/$be.err" || rc=$?
	echo "$be: stat -m 4 -- pingpong $N -> exit $rc"
	san_check "$be" "$T/$be.err"
	[ "$rc" = 0 ] || fail "$be: exit $rc: $(tail -n 1 "$T/$be.err")"
	python3 - "$T/$be.json" "$be" <<'PY' || fail "$be: stat's capture record (see above)"
import json, sys
j = json.load(open(sys.argv[1]))
c = j["capture"]
print("  events=%d lost=%d lost_records=%d lost_per_cpu=%s complete=%s "
      "order_violations=%d" % (c["events"], c["lost"], c["lost_records"],
                               c["lost_per_cpu"], c["complete"],
                               c["order_violations"]))
bad = 0
if j.get("backend") != sys.argv[2]:
    print("  backend is %s" % j.get("backend")); bad += 1
# Whether the burst overruns the tiny buffer depends on whether the
# reader keeps up, which a quiet machine lets it do; part 2 below stalls
# the reader and must see loss.  Here: consistent when there is loss.
if c["lost"] == 0 and c["lost_records"] == 0:
    print("  note: no loss this time (the reader kept up); part 2 stalls it")
    if c["complete"] is not True:
        print("  complete should be true without loss"); bad += 1
else:
    if not c["lost"] > 0 or not c["lost_records"] > 0:
        print("  loss records and counts disagree"); bad += 1
    if c["complete"] is not False:
        print("  complete should be false"); bad += 1
if sum(c["lost_per_cpu"]) != c["lost"]:
    print("  lost_per_cpu does not add up to lost"); bad += 1
if c["order_violations"] != 0:
    print("  order violations"); bad += 1
sys.exit(1 if bad else 0)
PY
done

# ---- 2. the lost records themselves, through the library ----
command -v cc >/dev/null || skip "no C compiler to build the library check"
[ -f "$LIBA" ] || skip "no $LIBA next to the ctxmon binary"
cat >"$T/lostcheck.c" <<'EOF'
/* lostcheck BACKEND KB STALL_MS CMD...: run CMD under a session, reading
 * nothing for the first STALL_MS (so the buffer surely overflows), check
 * the lost records and the order, print key=value lines; exit 1 on a bad
 * one. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ctxmon/ctxmon.h>

struct chk {
	uint64_t last, *cpu_last, lost, nlost, events, bad;
	int64_t *open_end;	/* a lost window's end, until the next event */
	int ncpus, printed;
};

static int on_event(const struct ctxmon_event *ev, void *arg)
{
	struct chk *c = arg;
	int cpu = ev->cpu;

	c->events++;
	if (ev->ts < c->last) {
		printf("bad: event at %" PRIu64 " after %" PRIu64 "\n", ev->ts, c->last);
		c->bad++;
	}
	c->last = ev->ts;
	if (cpu < 0 || cpu >= c->ncpus) {
		printf("bad: event on cpu %d\n", cpu);
		c->bad++;
		return 0;
	}
	if (c->open_end[cpu] >= 0 && ev->type != CTXMON_EV_LOST &&
	    ev->ts < (uint64_t)c->open_end[cpu]) {
		printf("bad: cpu %d: lost window ends at %" PRId64
		       " after the next event %" PRIu64 "\n", cpu,
		       c->open_end[cpu], ev->ts);
		c->bad++;
	}
	if (ev->type == CTXMON_EV_LOST) {
		c->nlost++;
		c->lost += ev->lost.count;
		if (c->printed++ < 5)
			printf("lost cpu=%d count=%" PRIu64 " start=%" PRIu64
			       " end=%" PRIu64 "\n", cpu, ev->lost.count,
			       ev->lost.start_ts, ev->lost.end_ts);
		/* The window starts at the CPU's previous event or, before
		 * its first one, at capture start. */
		if ((c->cpu_last[cpu] ? ev->lost.start_ts != c->cpu_last[cpu] :
					ev->lost.start_ts > ev->lost.end_ts) ||
		    ev->lost.end_ts < ev->lost.start_ts || ev->ts != ev->lost.end_ts) {
			printf("bad: cpu %d: window %" PRIu64 "..%" PRIu64
			       " at %" PRIu64 ", previous event on the cpu %" PRIu64 "\n",
			       cpu, ev->lost.start_ts, ev->lost.end_ts, ev->ts,
			       c->cpu_last[cpu]);
			c->bad++;
		}
		c->open_end[cpu] = (int64_t)ev->lost.end_ts;
		return 0;
	}
	c->open_end[cpu] = -1;
	c->cpu_last[cpu] = ev->ts;
	return 0;
}

int main(int argc, char **argv)
{
	struct ctxmon_session_opts o = { .sz = sizeof(o) };
	struct ctxmon_session_stats st;
	struct ctxmon_session *s;
	struct chk c = { 0 };
	uint64_t sum = 0;
	int ret;

	struct timespec stall = { 0 };

	if (argc < 5)
		return 2;
	o.target = CTXMON_TARGET_CMD;
	o.backend = argv[1];
	o.buffer_kb = (unsigned)atoi(argv[2]);
	stall.tv_nsec = atol(argv[3]) % 1000 * 1000000L;
	o.argv = argv + 4;
	s = ctxmon_session_open(&o);
	if (!s) {
		printf("error: %s\n", ctxmon_last_error());
		return 2;
	}
	c.ncpus = 4096;
	c.cpu_last = calloc(4096, sizeof(*c.cpu_last));
	c.open_end = malloc(4096 * sizeof(*c.open_end));
	for (int i = 0; i < 4096; i++)
		c.open_end[i] = -1;
	if (ctxmon_session_start(s) < 0) {
		printf("error: %s\n", ctxmon_session_error(s));
		return 2;
	}
	nanosleep(&stall, NULL);
	for (;;) {
		ret = ctxmon_session_poll(s, 100, on_event, &c);
		if (ret < 0) {
			printf("error: %s\n", ctxmon_session_error(s));
			return 2;
		}
		if (ctxmon_session_reap_child(s, false, NULL, NULL) == 1)
			break;
	}
	if (ctxmon_session_stop(s, on_event, &c) < 0) {
		printf("error: %s\n", ctxmon_session_error(s));
		return 2;
	}
	ctxmon_session_get_stats(s, &st);
	for (int i = 0; i < st.ncpus; i++)
		sum += st.lost_per_cpu[i];
	printf("events=%" PRIu64 " lost_records=%" PRIu64 " lost=%" PRIu64
	       " session_lost=%" PRIu64 " session_lost_records=%" PRIu64
	       " per_cpu_sum=%" PRIu64 " order_violations=%" PRIu64
	       " bad=%" PRIu64 "\n", c.events, c.nlost, c.lost, st.lost,
	       st.lost_records, sum, st.order_violations, c.bad);
	if (c.lost != st.lost || c.nlost != st.lost_records || sum != st.lost ||
	    st.order_violations || c.bad || !c.nlost)
		c.bad++;
	ctxmon_session_close(s);
	free(c.cpu_last);
	free(c.open_end);
	return c.bad ? 1 : 0;
}
EOF
# the libraries the Makefile links with, and the sanitizers if the library
# was built with them
LIBS=$(cd "$REPO" && make -s -f Makefile -f - print-libs <<<'print-libs: ; @echo $(LIBS)' 2>/dev/null)
SAN=""
nm "$LIBA" 2>/dev/null | grep -q __asan_ && SAN="-fsanitize=address,undefined"
if ! cc -std=c11 -D_GNU_SOURCE -g $SAN -I"$REPO/include" -o "$T/lostcheck" \
	"$T/lostcheck.c" "$LIBA" $LIBS 2>"$T/cc.err"; then
	cat "$T/cc.err" >&2
	fail "cannot build the library check against $LIBA"
	finish
fi
# perf too: its rings of -m 4 (one page) overflow while the reader sleeps,
# and the kernel's PERF_RECORD_LOST must come out the same way
for be in ftrace ftrace-text perf; do
	rc=0
	"$T/lostcheck" "$be" 4 300 "$WL/pingpong" "$N" >"$T/lc.out" 2>"$T/lc.err" || rc=$?
	echo "$be: library check -> exit $rc"
	sed 's/^/  /' "$T/lc.out"
	san_check "$be lostcheck" "$T/lc.err"
	[ "$rc" = 0 ] || fail "$be: the lost records or the order are wrong (see above)"
done
# the table says what to do about a loss (issue 13): with ftrace-text,
# larger buffers or a binary backend
# (whether the reader falls behind depends on the machine: up to 3 tries)
for try in 1 2 3; do
	rc=0
	"$CTXMON" stat --backend ftrace-text -m 4 -o "$T/hint.txt" -- \
		"$WL/pingpong" "$N" 2>"$T/hint.err" || rc=$?
	san_check "hint $try" "$T/hint.err"
	[ "$rc" = 0 ] || fail "ftrace-text -m 4, try $try: exit $rc"
	grep -q '^lost events:' "$T/hint.txt" && break
	echo "  try $try: ftrace-text lost nothing (the reader kept up)"
done
if grep -q '^lost events:' "$T/hint.txt"; then
	grep -A1 '^lost events:' "$T/hint.txt" | sed 's/^/  /'
	grep -q 'to lose less: larger per-CPU buffers (-m KB), or a binary backend' "$T/hint.txt" ||
		fail "ftrace-text: a loss without the -m / backend hint"
	grep -q 'read real-time, above them, with --realtime 99' "$T/hint.txt" ||
		fail "ftrace-text: a loss without the hint for busy CPUs"
else
	not_judged "loss hint" "ftrace-text lost nothing in 3 tries: the hint was not seen"
fi
finish
