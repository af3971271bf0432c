/*
 * metrics_int.h - inside of the metrics object (metrics.c collects,
 * metrics_fmt.c renders), and the bounded "family" that keeps the
 * exported series of one kind to the top N rows plus "other".
 */
#ifndef CTXMON_METRICS_INT_H
#define CTXMON_METRICS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ctxmon/metrics.h>
#include "cgroup.h"
#include "capture/cgagg_load.h"

#define STAT_WORDS (sizeof(struct cgagg_stats) / sizeof(uint64_t))
#define NAME_LEN 128

/* One row of a collection: a key, @w counters, and its activity (a
 * cumulative count that ranks rows). */
struct fam_row {
	uint64_t k1, k2;
	const uint64_t *v;
	uint64_t act;
	const char *name;	/* label, NULL: none */
};

struct fam_member {
	uint64_t k1, k2;
	uint64_t *base, *cur;	/* w words each: exported = cur - base */
	uint64_t last_act;
	unsigned idle;		/* collections without activity */
	char name[NAME_LEN];
};

/* A row of the last collection; @v (w words) is kept for rows that were
 * not members, whose values "other" held then: a row that joins starts
 * from them, so its series counts from that collection on. */
struct fam_prev {
	uint64_t k1, k2, act;
	const uint64_t *v;	/* NULL: a member then */
};

struct fam {
	size_t w, top;
	struct fam_member *m;	/* top entries */
	size_t nm;
	uint64_t *gone;		/* rows that left the kernel map */
	uint64_t *other;	/* total - sum of the members' exports */
	struct fam_prev *prev;	/* last collection's rows, sorted */
	uint64_t *prev_v;	/* their values (non-members), w words each */
	size_t nprev;
	bool first;
};

int fam__init(struct fam *f, size_t w, size_t top);
void fam__fini(struct fam *f);
/* Add a row that leaves the kernel map for good (an exited process). */
void fam__gone(struct fam *f, const uint64_t *v);
/*
 * A new collection: update the members, evict those idle for long when
 * others are active, admit the most active new rows (keys with k1 == 0
 * are never admitted: overflow rows), recompute "other".  @rows is
 * sorted in place.  0 or -ENOMEM.
 */
int fam__update(struct fam *f, struct fam_row *rows, size_t n);
/* The exported value of member @i (w words) into @out. */
void fam__value(const struct fam *f, size_t i, uint64_t *out);

struct ctxmon_metrics {
	struct cgagg *g;
	bool per_cgroup, per_process;
	struct cgroup_names names;
	bool names_scanned;
	struct fam cg, proc, pair;
	struct cgagg_cpu_row *cpus;
	uint64_t *cpu_busy, *cpu_idle; /* exported, never decreasing */
	int ncpus;
	struct cgagg_totals tot;
	struct cgagg_prog_stat progs[CGAGG_MAX_PROGS];
	size_t nprogs;
	uint64_t rss_bytes;
	double collect_wall;	/* time of the collection, UNIX seconds */
	uint64_t collections;
	uint64_t procs_folded;	/* exited processes folded into other */
	size_t ncg_seen, nproc_seen, npair_seen, samples;
	uint32_t max_cg, max_proc, max_pair;
};

#endif
