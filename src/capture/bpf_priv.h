/*
 * bpf_priv.h - what the files of the bpf backends share: the state of one
 * open backend (bpf.c loads and attaches, bpf_rec.c turns the streaming
 * object's records into events, bpf_agg.c reads the aggregation object's
 * tables into rows).  Private to src/capture/bpf*.c.
 */
#ifndef CTXMON_CAPTURE_BPF_PRIV_H
#define CTXMON_CAPTURE_BPF_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/types.h>
#include <bpf/bpf.h>

#include "internal.h"
#include "ctxsw.h"
#include "bpf_backend.h"

struct bpf_map;
struct ring_buffer;
struct ctxsw_stream_bpf;
struct ctxsw_agg_bpf;

struct bpf_priv {
	struct backend_ctx *ctx;
	/* one of the two objects (ctxsw.bpf.h), and the maps used here */
	struct ctxsw_stream_bpf *st;
	struct ctxsw_agg_bpf *ag;
	struct {
		struct bpf_map *cpu_state, *cpus, *targets, *fork_roots;
		struct bpf_map *events;		/* streaming */
		struct bpf_map *rows, *free_slots;	/* aggregation */
		struct bpf_map *orphan_marks;		/* aggregation */
	} maps;
	/* aggregation: the rows array (nslots rows of row_sz bytes), its
	 * first rows_mapped rows mapped (rows_len bytes), the object's
	 * count of slots handed out, and the slots drained but not yet
	 * given back to the programs (bpf_agg.c) */
	unsigned char *rows_mem;
	size_t rows_len, row_sz;
	uint32_t nslots, rows_mapped;
	const volatile uint32_t *next_slot;
	struct bpf_drained {
		uint32_t slot;
		uint64_t bury_ts;
	} *drained_rows;
	size_t ndrained, drained_cap;
	uint64_t *dropped_told;	/* per CPU: rows_dropped told the stream */
	struct ring_buffer *rb;
	uint32_t filter_kind;
	bool tp_btf, aggregate;
	bool enabled, drained;
	uint64_t disable_ts;
	int nposs; /* possible CPUs, for per-CPU maps */
	struct ctxsw_cpu *cpubuf; /* nposs entries */
	uint64_t cpus_read_at;	/* the read_rows() time cpubuf was read for */
	uint32_t ireads;	/* read_rows() with interval maxima so far */
	int cb_err; /* first error inside the ring callback */
	uint64_t bad_records;
	struct bpf_csw csw;	/* streaming: switch counters by tid */
	/* aggregation: rows of dead threads drained from the kernel, and
	 * the oldest of them folded by comm past CTXMON_EXITED_KEEP */
	struct ctxsw_row *dead;
	size_t ndead, dead_cap;
	struct fold fold;
	/* aggregation: orphan marks (ctxsw.h) whose dead row has not come
	 * yet: {tid, start} keys, each with its time */
	struct bpf_orphan_mark {
		struct ctxsw_orphan_key k;
		uint64_t ts;
	} *marks;
	size_t nmarks, marks_cap;
	/* aggregation: the rows the last read took for missed switch-outs
	 * (after bpf_row__settle(), or with its budget spent), by tid and
	 * the time of their last change: not waited for again while
	 * unchanged */
	struct bpf_unseen {
		int32_t tid;
		uint64_t state_ts;
	} *unseen;
	size_t nunseen, unseen_cap;
	int stats_fd;		/* BPF_STATS_RUN_TIME held while > 0 */
	bool stats_tried;
};
/* bpf.c: the per-CPU state map into p->cpubuf; 0 or -errno */
int bpf__read_cpu_state(struct bpf_priv *p);

/* bpf_agg.c: move the rows of dead threads from the kernel's table into
 * p->dead (folding the oldest past CTXMON_EXITED_KEEP); 0 or -errno. */
int bpf_agg__map_rows(struct bpf_priv *p, uint32_t used);
int bpf_agg__drain_dead(struct bpf_priv *p, uint64_t now);
/* the backend's forget_exited: drop the rows of dead threads read */
void bpf_agg__forget_exited(void *priv);

#endif
