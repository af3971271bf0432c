/*
 * ctxmon/metrics.h - scheduler metrics per cgroup and per process, counted
 * in the kernel, as a Prometheus / OpenMetrics exposition.
 *
 * A metrics object loads BPF programs that add into bounded kernel maps at
 * the scheduler tracepoints (nothing is sent per event), reads those maps
 * when asked (ctxmon_metrics_collect) and formats the last collection
 * (ctxmon_metrics_render).  The exposition is bounded: per family, the
 * `top` most active cgroups / processes / (victim, culprit) pairs get their
 * own series and everything else is summed into an "other" series, so the
 * number of series does not grow with the fork rate, and every counter
 * stays monotonic (a row that joins the top starts from the value it has
 * then; a row that leaves or exits goes on counting in "other").
 *
 * Threads: collect and render must not run concurrently on one object;
 * the rendered text is the caller's, to hand to any thread.
 */
#ifndef CTXMON_METRICS_H
#define CTXMON_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ctxmon_metrics_opts {
	size_t sz;			/* sizeof(struct ctxmon_metrics_opts) */
	const char *const *cgroups;	/* only tasks in these cgroup v2
					 * directories (absolute, or relative
					 * to the v2 mount) or below; the
					 * filter runs in the kernel */
	size_t ncgroups;
	bool per_cgroup;		/* export cgroup families */
	bool per_process;		/* export process families; neither:
					 * both */
	unsigned top;			/* rows per family before "other";
					 * 0: 20 */
	unsigned max_cgroups;		/* kernel map bounds, 0: 4096 */
	unsigned max_processes;		/* 0: 8192 */
	unsigned max_pairs;		/* 0: 16384 */
	bool force_raw_tp;		/* raw_tp programs even if tp_btf
					 * loads (tests) */
};

struct ctxmon_metrics;

/*
 * Load and attach the programs; counting starts now.  Needs root (BPF).
 * Returns NULL and sets errno on failure, with one line of explanation in
 * ctxmon_metrics_last_error().  Free with ctxmon_metrics_close().
 */
struct ctxmon_metrics *ctxmon_metrics_open(const struct ctxmon_metrics_opts *o);

/* ctxmon_last_error(), by an older name kept for its callers. */
const char *ctxmon_metrics_last_error(void);

/* Read the kernel maps into a new collection (the rows of processes that
 * exited are folded and removed from the kernel map).  0 or -errno. */
int ctxmon_metrics_collect(struct ctxmon_metrics *m);

/* Drop the cached cgroup id -> path names; the next collection reads
 * them again (a cgroup renamed since). */
void ctxmon_metrics_forget_names(struct ctxmon_metrics *m);

enum ctxmon_metrics_format {
	CTXMON_METRICS_PROMETHEUS,	/* text format 0.0.4 */
	CTXMON_METRICS_OPENMETRICS,	/* OpenMetrics 1.0.0 text */
};

/* MIME type (with version) of a format, for Content-Type. */
const char *ctxmon_metrics_content_type(enum ctxmon_metrics_format f);

/*
 * The last collection as text in format @f: *@text is malloc'd (the
 * caller frees it), *@len its length.  0 or -errno.
 */
int ctxmon_metrics_render(struct ctxmon_metrics *m,
			  enum ctxmon_metrics_format f, char **text,
			  size_t *len);

struct ctxmon_metrics_info {
	bool tp_btf;			/* tp_btf programs, else raw_tp */
	uint64_t collections;
	size_t cgroups_seen;		/* rows in the kernel maps now */
	size_t processes_seen;
	size_t pairs_seen;
	size_t samples;			/* samples of the last rendering */
};
int ctxmon_metrics_get_info(const struct ctxmon_metrics *m,
			    struct ctxmon_metrics_info *out);

/* Detach the programs and free everything; NULL is fine. */
void ctxmon_metrics_close(struct ctxmon_metrics *m);

#ifdef __cplusplus
}
#endif
#endif
