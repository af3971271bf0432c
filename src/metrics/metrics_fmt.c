/*
 * metrics_fmt.c - the last collection of a metrics object as text: the
 * Prometheus text format 0.0.4 or OpenMetrics 1.0.0.  The two differ in
 * the family name of counters (OpenMetrics names the family without
 * "_total" and its samples with it), the # UNIT line, and the closing
 * "# EOF".  Metric names follow Prometheus' conventions: base units
 * (seconds, bytes), "_total" on counters.  docs/metrics.md lists them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "metrics/metrics_int.h"
#include "output/json_out.h"

/* latency buckets exported: le = 2^i ns for i in [LE_FIRST, LE_LAST] */
#define LE_FIRST 10	/* 1.024 us */
#define LE_LAST 33	/* 8.59 s */
#define NS_PER_S ((uint64_t)1000000000)

struct sb {
	char *buf;
	size_t len, cap;
	int err;
	bool om;
	size_t samples;
};

static void sb_printf(struct sb *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->buf + b->len, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = -EINVAL;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap * 2 : 65536;
		while (cap - b->len <= (size_t)n)
			cap *= 2;
		char *nb = realloc(b->buf, cap);
		if (!nb) {
			b->err = -ENOMEM;
			return;
		}
		b->buf = nb;
		b->cap = cap;
	}
}

/* A label value with \, " and newline escaped.  The exposition is UTF-8
 * and Prometheus refuses a scrape holding any other byte: a comm is bytes,
 * so a byte outside well-formed UTF-8 becomes U+FFFD.  Cut at @len, never
 * inside a character. */
static const char *esc(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t o = 0, n;

	for (; *p; p++) {
		if (*p == '\\' || *p == '"' || *p == '\n') {
			if (o + 2 >= len)
				break;
			buf[o++] = '\\';
			buf[o++] = *p == '\n' ? 'n' : (char)*p;
		} else if (*p < 0x80) {
			if (o + 1 >= len)
				break;
			if (*p >= 0x20)
				buf[o++] = (char)*p;
		} else if ((n = utf8__seq(p))) {
			if (o + n >= len)
				break;
			memcpy(buf + o, p, n);
			o += n;
			p += n - 1;
		} else {
			if (o + 3 >= len)
				break;
			memcpy(buf + o, "\xef\xbf\xbd", 3);	/* U+FFFD */
			o += 3;
		}
	}
	buf[o] = '\0';
	return buf;
}

enum mtype { COUNTER, GAUGE, HISTOGRAM };

/* The # lines of a family.  @name is the counter's name without _total. */
static void family(struct sb *b, const char *name, enum mtype t,
		   const char *unit, const char *help)
{
	static const char *const tn[] = { "counter", "gauge", "histogram" };
	const char *suffix = t == COUNTER && !b->om ? "_total" : "";

	sb_printf(b, "# HELP %s%s %s\n", name, suffix, help);
	sb_printf(b, "# TYPE %s%s %s\n", name, suffix, tn[t]);
	if (b->om && unit)
		sb_printf(b, "# UNIT %s %s\n", name, unit);
}

static void sample_u(struct sb *b, const char *name, const char *labels,
		     uint64_t v)
{
	sb_printf(b, "%s%s%s%s %" PRIu64 "\n", name, labels[0] ? "{" : "",
		  labels, labels[0] ? "}" : "", v);
	b->samples++;
}

static void sample_s(struct sb *b, const char *name, const char *labels,
		     uint64_t ns)
{
	sb_printf(b, "%s%s%s%s %" PRIu64 ".%09" PRIu64 "\n", name,
		  labels[0] ? "{" : "", labels, labels[0] ? "}" : "",
		  ns / NS_PER_S, ns % NS_PER_S);
	b->samples++;
}

/* ---- per-row families ------------------------------------------------- */

static const char *const kind_name[CGAGG_KINDS] = {
	[CGAGG_VOLUNTARY] = "voluntary",
	[CGAGG_INVOLUNTARY] = "involuntary",
	[CGAGG_EXIT] = "exit",
};

static const char *const cause_name[CGAGG_CAUSES] = {
	[CGAGG_CAUSE_FUTEX] = "futex",
	[CGAGG_CAUSE_POLL] = "poll",
	[CGAGG_CAUSE_READ] = "read",
	[CGAGG_CAUSE_WRITE] = "write",
	[CGAGG_CAUSE_SLEEP] = "sleep",
	[CGAGG_CAUSE_WAIT] = "wait",
	[CGAGG_CAUSE_SYSCALL_OTHER] = "other_syscall",
	[CGAGG_CAUSE_BLOCKED] = "blocked",
	[CGAGG_CAUSE_KTHREAD] = "kernel_thread",
	[CGAGG_CAUSE_YIELD] = "yield",
	[CGAGG_CAUSE_WAKEUP_PREEMPT] = "wakeup_preemption",
	[CGAGG_CAUSE_SLICE] = "slice",
	[CGAGG_CAUSE_EXIT] = "exit",
};

/* The rows of one family: members then "other", each with its labels. */
struct rowset {
	size_t n;
	char (*labels)[2 * NAME_LEN + 64];
	struct cgagg_stats *s;
};

static int rowset_build(struct ctxmon_metrics *m, const struct fam *f,
			bool proc, struct rowset *rs)
{
	char e[2 * NAME_LEN];

	rs->n = f->nm + 1;
	rs->labels = calloc(rs->n, sizeof(*rs->labels));
	rs->s = calloc(rs->n, sizeof(*rs->s));
	if (!rs->labels || !rs->s)
		return -ENOMEM;
	for (size_t i = 0; i < f->nm; i++) {
		fam__value(f, i, (uint64_t *)&rs->s[i]);
		if (proc)
			snprintf(rs->labels[i], sizeof(rs->labels[i]),
				 "pid=\"%" PRIu64 "\",comm=\"%s\"", f->m[i].k1,
				 esc(f->m[i].name, e, sizeof(e)));
		else if (f->m[i].name[0])
			snprintf(rs->labels[i], sizeof(rs->labels[i]),
				 "cgroup=\"%s\"",
				 esc(f->m[i].name, e, sizeof(e)));
		else /* removed before its path was read */
			snprintf(rs->labels[i], sizeof(rs->labels[i]),
				 "cgroup=\"id:%" PRIu64 "\"", f->m[i].k1);
		(void)m;
	}
	memcpy(&rs->s[f->nm], f->other, sizeof(rs->s[0]));
	snprintf(rs->labels[f->nm], sizeof(rs->labels[0]), "%s",
		 proc ? "pid=\"other\",comm=\"other\"" : "cgroup=\"other\"");
	return 0;
}

static void rowset_free(struct rowset *rs)
{
	free(rs->labels);
	free(rs->s);
}

static void render_rows(struct sb *b, const char *what, const struct rowset *rs)
{
	char name[128], lab[2 * NAME_LEN + 128];
	const char *who = !strcmp(what, "cgroup") ? "cgroup's" : "process's";

	snprintf(name, sizeof(name), "ctxmon_%s_switches", what);
	snprintf(lab, sizeof(lab), "Context switches of the %s tasks by kind "
		 "(the kernel's nvcsw/nivcsw verdict; exit: a dying task's "
		 "last switch).", who);
	family(b, name, COUNTER, NULL, lab);
	strcat(name, "_total");
	for (size_t i = 0; i < rs->n; i++)
		for (int k = 0; k < CGAGG_KINDS; k++) {
			snprintf(lab, sizeof(lab), "%s,kind=\"%s\"",
				 rs->labels[i], kind_name[k]);
			sample_u(b, name, lab, rs->s[i].sw[k]);
		}

	snprintf(name, sizeof(name), "ctxmon_%s_switch_causes", what);
	family(b, name, COUNTER, NULL,
	       "Context switches by cause: the syscall class a voluntary "
	       "switch blocked in, or how the CPU was taken (yield, "
	       "wakeup_preemption, slice), or exit.");
	strcat(name, "_total");
	for (size_t i = 0; i < rs->n; i++)
		for (int k = 0; k < CGAGG_CAUSES; k++) {
			snprintf(lab, sizeof(lab), "%s,cause=\"%s\"",
				 rs->labels[i], cause_name[k]);
			sample_u(b, name, lab, rs->s[i].cause[k]);
		}

	static const struct {
		const char *suffix, *help;
		size_t off;
	} times[] = {
		{ "run_seconds", "Time on CPU.",
		  offsetof(struct cgagg_stats, run_ns) },
		{ "runnable_wait_seconds",
		  "Time runnable but waiting for a CPU (run queue).",
		  offsetof(struct cgagg_stats, wait_ns) },
		{ "sleep_seconds",
		  "Time asleep, charged when the sleep ends.",
		  offsetof(struct cgagg_stats, sleep_ns) },
	};
	for (size_t t = 0; t < ARRAY_SIZE(times); t++) {
		snprintf(name, sizeof(name), "ctxmon_%s_%s", what,
			 times[t].suffix);
		family(b, name, COUNTER, "seconds", times[t].help);
		strcat(name, "_total");
		for (size_t i = 0; i < rs->n; i++)
			sample_s(b, name, rs->labels[i],
				 *(const uint64_t *)((const char *)&rs->s[i] +
						     times[t].off));
	}

	snprintf(name, sizeof(name), "ctxmon_%s_migrations", what);
	family(b, name, COUNTER, NULL, "Moves of a task to another CPU.");
	strcat(name, "_total");
	for (size_t i = 0; i < rs->n; i++)
		sample_u(b, name, rs->labels[i], rs->s[i].migrations);

	snprintf(name, sizeof(name), "ctxmon_%s_wakeups", what);
	family(b, name, COUNTER, NULL, "Times a task was woken.");
	strcat(name, "_total");
	for (size_t i = 0; i < rs->n; i++)
		sample_u(b, name, rs->labels[i], rs->s[i].wakeups);

	snprintf(name, sizeof(name), "ctxmon_%s_wakeup_latency_seconds", what);
	family(b, name, HISTOGRAM, "seconds",
	       "Wakeup (run queue) latency, from the wakeup to running, "
	       "charged to the woken task.");
	for (size_t i = 0; i < rs->n; i++) {
		const struct cgagg_stats *s = &rs->s[i];
		uint64_t cum = 0;

		for (int k = 0; k < CGAGG_HIST; k++) {
			cum += s->lat_hist[k];
			if (k < LE_FIRST || k > LE_LAST)
				continue;
			snprintf(lab, sizeof(lab), "%s,le=\"%.12g\"",
				 rs->labels[i], (double)(1ull << k) / 1e9);
			sb_printf(b, "%s_bucket{%s} %" PRIu64 "\n", name, lab,
				  (uint64_t)cum);
			b->samples++;
		}
		snprintf(lab, sizeof(lab), "%s,le=\"+Inf\"", rs->labels[i]);
		sb_printf(b, "%s_bucket{%s} %" PRIu64 "\n", name, lab,
			  (uint64_t)s->lat_count);
		sb_printf(b, "%s_sum{%s} %" PRIu64 ".%09" PRIu64 "\n", name,
			  rs->labels[i], (uint64_t)s->lat_sum_ns / NS_PER_S,
			  (uint64_t)s->lat_sum_ns % NS_PER_S);
		sb_printf(b, "%s_count{%s} %" PRIu64 "\n", name, rs->labels[i],
			  (uint64_t)s->lat_count);
		b->samples += 3;
	}
}

static const char *label_cg(struct ctxmon_metrics *m, uint64_t id, char *buf,
			    size_t len)
{
	const char *p = id ? cgroup_names__find(&m->names, id) : "other";
	char tmp[64];

	if (!p) {
		snprintf(tmp, sizeof(tmp), "id:%" PRIu64, id);
		p = tmp;
	}
	return esc(p, buf, len);
}

static void render_pairs(struct ctxmon_metrics *m, struct sb *b)
{
	const char *name = "ctxmon_cgroup_victim_wait_seconds";
	char v[NAME_LEN * 2], c[NAME_LEN * 2], lab[NAME_LEN * 4 + 32];

	family(b, name, COUNTER, "seconds",
	       "Noisy neighbours: runnable-wait time of tasks of the victim "
	       "cgroup spent while a task of the culprit cgroup ran on that "
	       "CPU.");
	for (size_t i = 0; i < m->pair.nm; i++) {
		uint64_t ns;

		fam__value(&m->pair, i, &ns);
		snprintf(lab, sizeof(lab), "victim=\"%s\",culprit=\"%s\"",
			 label_cg(m, m->pair.m[i].k1, v, sizeof(v)),
			 label_cg(m, m->pair.m[i].k2, c, sizeof(c)));
		sample_s(b, "ctxmon_cgroup_victim_wait_seconds_total", lab, ns);
	}
	sample_s(b, "ctxmon_cgroup_victim_wait_seconds_total",
		 "victim=\"other\",culprit=\"other\"", m->pair.other[0]);
}

static void render_self(struct ctxmon_metrics *m, struct sb *b)
{
	char lab[96];

	family(b, "ctxmon_cpu_busy_seconds", COUNTER, "seconds",
	       "Time a CPU ran a task (not its idle task).");
	for (int i = 0; i < m->ncpus; i++) {
		snprintf(lab, sizeof(lab), "cpu=\"%d\"", i);
		sample_s(b, "ctxmon_cpu_busy_seconds_total", lab,
			 m->cpu_busy[i]);
	}
	family(b, "ctxmon_cpu_idle_seconds", COUNTER, "seconds",
	       "Time a CPU ran its idle task.");
	for (int i = 0; i < m->ncpus; i++) {
		snprintf(lab, sizeof(lab), "cpu=\"%d\"", i);
		sample_s(b, "ctxmon_cpu_idle_seconds_total", lab,
			 m->cpu_idle[i]);
	}
	family(b, "ctxmon_cpu_switches", COUNTER, NULL,
	       "Context switches on a CPU.");
	for (int i = 0; i < m->ncpus; i++) {
		snprintf(lab, sizeof(lab), "cpu=\"%d\"", i);
		sample_u(b, "ctxmon_cpu_switches_total", lab,
			 m->cpus[i].switches);
	}

	family(b, "ctxmon_bpf_program_run_seconds", COUNTER, "seconds",
	       "Run time of ctxmon's BPF programs (kernel BPF stats, enabled "
	       "while ctxmon runs).");
	for (size_t i = 0; i < m->nprogs; i++) {
		snprintf(lab, sizeof(lab), "program=\"%s\"", m->progs[i].name);
		sample_s(b, "ctxmon_bpf_program_run_seconds_total", lab,
			 m->progs[i].run_ns);
	}
	family(b, "ctxmon_bpf_program_runs", COUNTER, NULL,
	       "Runs of ctxmon's BPF programs.");
	for (size_t i = 0; i < m->nprogs; i++) {
		snprintf(lab, sizeof(lab), "program=\"%s\"", m->progs[i].name);
		sample_u(b, "ctxmon_bpf_program_runs_total", lab,
			 m->progs[i].runs);
	}
	family(b, "ctxmon_lost_events", COUNTER, NULL,
	       "Events lost between the kernel and ctxmon (always 0 here: "
	       "the counting is done in the kernel, nothing is sent per "
	       "event).");
	sample_u(b, "ctxmon_lost_events_total", "", 0);
	family(b, "ctxmon_overflow_events", COUNTER, NULL,
	       "Events counted in a map's overflow row (\"other\") because "
	       "the kernel map was full.");
	sample_u(b, "ctxmon_overflow_events_total", "map=\"cgroups\"",
		 m->tot.cg_overflow);
	sample_u(b, "ctxmon_overflow_events_total", "map=\"processes\"",
		 m->tot.proc_overflow);
	sample_u(b, "ctxmon_overflow_events_total", "map=\"pairs\"",
		 m->tot.pair_overflow);
	family(b, "ctxmon_inexact_switches", COUNTER, NULL,
	       "Switches whose kind was told from the task state, not from "
	       "the kernel's counters (a task's first switch-out seen).");
	sample_u(b, "ctxmon_inexact_switches_total", "", m->tot.inexact);
	family(b, "ctxmon_unattributed_wait_seconds", COUNTER, "seconds",
	       "Runnable waits older than the per-CPU run history, charged to "
	       "no culprit.");
	sample_s(b, "ctxmon_unattributed_wait_seconds_total", "",
		 m->tot.wait_unattributed);
	family(b, "ctxmon_exited_processes_folded", COUNTER, NULL,
	       "Exited processes whose numbers were moved to \"other\".");
	sample_u(b, "ctxmon_exited_processes_folded_total", "",
		 m->procs_folded);
	family(b, "ctxmon_collections", COUNTER, NULL,
	       "Reads of the kernel maps.");
	sample_u(b, "ctxmon_collections_total", "", m->collections);

	family(b, "ctxmon_resident_memory_bytes", GAUGE, "bytes",
	       "Resident memory of the ctxmon process.");
	sample_u(b, "ctxmon_resident_memory_bytes", "", m->rss_bytes);
	family(b, "ctxmon_kernel_rows", GAUGE, NULL,
	       "Rows in the kernel maps, and their bounds.");
	snprintf(lab, sizeof(lab), "map=\"cgroups\"");
	sample_u(b, "ctxmon_kernel_rows", lab, m->ncg_seen);
	sample_u(b, "ctxmon_kernel_rows", "map=\"processes\"", m->nproc_seen);
	sample_u(b, "ctxmon_kernel_rows", "map=\"pairs\"", m->npair_seen);
	family(b, "ctxmon_kernel_rows_limit", GAUGE, NULL,
	       "Capacity of the kernel maps.");
	sample_u(b, "ctxmon_kernel_rows_limit", "map=\"cgroups\"", m->max_cg);
	sample_u(b, "ctxmon_kernel_rows_limit", "map=\"processes\"",
		 m->max_proc);
	sample_u(b, "ctxmon_kernel_rows_limit", "map=\"pairs\"", m->max_pair);
	family(b, "ctxmon_last_collection_timestamp_seconds", GAUGE, "seconds",
	       "When the numbers shown were read (UNIX time).");
	sb_printf(b, "ctxmon_last_collection_timestamp_seconds %.3f\n",
		  m->collect_wall);
	b->samples++;
	family(b, "ctxmon_build_info", GAUGE, NULL,
	       "ctxmon's version and program type.");
	snprintf(lab, sizeof(lab), "version=\"%s\",programs=\"%s\"",
		 CTXMON_VERSION, cgagg__tp_btf(m->g) ? "tp_btf" : "raw_tp");
	sample_u(b, "ctxmon_build_info", lab, 1);
}

const char *ctxmon_metrics_content_type(enum ctxmon_metrics_format f)
{
	return f == CTXMON_METRICS_OPENMETRICS ?
		       "application/openmetrics-text; version=1.0.0; "
		       "charset=utf-8" :
		       "text/plain; version=0.0.4; charset=utf-8";
}

int ctxmon_metrics_render(struct ctxmon_metrics *m,
			  enum ctxmon_metrics_format f, char **text,
			  size_t *len)
{
	struct sb b = { .om = f == CTXMON_METRICS_OPENMETRICS };
	struct rowset rs = { 0 };
	int ret = 0;

	if (m->per_cgroup) {
		ret = rowset_build(m, &m->cg, false, &rs);
		if (!ret)
			render_rows(&b, "cgroup", &rs);
		rowset_free(&rs);
		if (!ret)
			render_pairs(m, &b);
	}
	if (!ret && m->per_process) {
		memset(&rs, 0, sizeof(rs));
		ret = rowset_build(m, &m->proc, true, &rs);
		if (!ret)
			render_rows(&b, "process", &rs);
		rowset_free(&rs);
	}
	if (!ret)
		render_self(m, &b);
	if (!ret && b.om)
		sb_printf(&b, "# EOF\n");
	if (!ret)
		ret = b.err;
	if (ret < 0) {
		free(b.buf);
		return ret;
	}
	m->samples = b.samples;
	*text = b.buf;
	*len = b.len;
	return 0;
}
