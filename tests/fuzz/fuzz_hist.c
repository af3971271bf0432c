/*
 * fuzz_hist.c - libFuzzer target for the hist-trigger parser and evaluator
 * (include/ctxmon/hist.h).
 *
 * The input is lines: "synth DEF" defines a synthetic event, "EVENT
 * TRIGGER" adds a trigger to EVENT, any other line is a trigger on
 * sched:sched_switch.  The triggers that parse then see a short fixed
 * stream of switch, waking and syscall events, and both output formats are
 * produced, so the evaluator and the printers run on whatever parsed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/hist.h>

static void feed(struct ctxmon_hist *h)
{
	static const char *const comms[] = { "a", "b", "swapper/0" };
	struct ctxmon_event ev;

	for (int i = 0; i < 24; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.ts = 1000u * (unsigned)i + 7;
		ev.cpu = i & 1;
		ev.tid = i % 3;
		switch (i % 3) {
		case 0:
			ev.type = CTXMON_EV_WAKING;
			ev.wake.tid = (i / 3) % 4;
			ev.wake.comm = comms[i % 2];
			ev.wake.prio = 120;
			break;
		case 1:
			ev.type = CTXMON_EV_SWITCH;
			ev.sw.prev_tid = i % 5;
			ev.sw.prev_comm = comms[i % 3];
			ev.sw.prev_state = (uint32_t)(i % 4);
			ev.sw.preempt = (uint8_t)(i % 7 == 1);
			ev.sw.next_tid = (i / 3) % 4;
			ev.sw.next_comm = comms[(i + 1) % 3];
			ev.sw.prev_prio = ev.sw.next_prio = 100 + i;
			break;
		default:
			ev.type = CTXMON_EV_SYS_EXIT;
			ev.sys.id = i;
			ev.sys.ret = -i;
			break;
		}
		ctxmon_hist_feed(h, &ev);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctxmon_hist *h = ctxmon_hist_new();
	char *buf = malloc(size + 1), *line, *save = NULL, *s;

	if (!h || !buf)
		goto out;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');

		if (!strncmp(line, "synth ", 6))
			(void)ctxmon_hist_define(h, line + 6);
		else if (sp && strchr(line, ':') && strchr(line, ':') < sp &&
			 strncmp(line, "hist", 4)) {
			*sp = '\0';
			(void)ctxmon_hist_add(h, line, sp + 1);
		} else {
			(void)ctxmon_hist_add(h, "sched:sched_switch", line);
		}
	}
	feed(h);
	s = ctxmon_hist_format(h, CTXMON_HIST_TEXT);
	free(s);
	s = ctxmon_hist_format(h, CTXMON_HIST_JSON);
	free(s);
	ctxmon_hist_clear(h);
	feed(h);
out:
	free(buf);
	ctxmon_hist_free(h);
	return 0;
}
