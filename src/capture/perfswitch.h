/*
 * perfswitch.h - the private state of the perf-switch backend, shared by
 * perfswitch.c (opening the events, reading the rings) and
 * perfswitch_attach.c (what /proc tells about a followed command).
 * Internal to the library.
 */
#ifndef CTXMON_CAPTURE_PERFSWITCH_H
#define CTXMON_CAPTURE_PERFSWITCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "internal.h"
#include "capture/perf_ring.h"

/* per CPU, halved until the kernel lets an unprivileged user lock it */
#define DEFAULT_BUFFER_KB 2048
#define MIN_BUFFER_KB 16
#define MAX_RECORD 65536
/* sample_id_all trailer with PERF_SAMPLE_TID | TIME | CPU */
#define SID_LEN 24

struct sid {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
};

struct ps_ring {
	struct perf_ring pr;	/* cpu, mapping, read position, order */
	uint64_t lost; /* drops said in the stream so far */
	uint64_t lost_records; /* drops told by PERF_RECORD_LOST */
	/* the followed task this CPU last switched to, 0 once it left */
	int32_t cur_tid, cur_pid;
};

/* Where the merge of the rings is in one ring: its next record. */
struct ps_cursor {
	struct perf_event_header h; /* the next record's */
	uint64_t ts; /* and its time */
	bool more;
};

struct comm_slot {
	int32_t tid; /* 0: free */
	const char *comm;
	uint64_t outs[2]; /* switch-outs stated: involuntary, voluntary */
};

struct ps_priv {
	struct backend_ctx *ctx;
	struct ps_ring *rings; /* ncpus entries, by CPU id */
	struct ps_cursor *cur; /* ncpus entries */
	int *fds;
	int *fdcpu; /* the CPU of each event */
	size_t nfds, capfds;
	bool read_lost; /* PERF_FORMAT_LOST works (6.0 and later) */
	pid_t *tids; /* tasks an event was opened on */
	size_t ntids, captids;
	int epfd;
	bool enabled;
	bool inherit;
	uint8_t *scratch;
	struct comm_slot *comms;
	size_t ccap, ccount;
	uint64_t outs[2]; /* switch-out records read: involuntary, voluntary */
};

/* perfswitch.c: the slot of @tid's comm and counts (tid 0: none); open
 * the events on @tid; state a switch-out or a switch-in on @cpu at @ts;
 * read what the rings hold into the stream. */
struct comm_slot *perfswitch__comm_slot(struct ps_priv *p, int32_t tid);
int perfswitch__open_task(struct ps_priv *p, pid_t tid);
void perfswitch__emit_out(struct ps_priv *p, int cpu, uint64_t ts,
			  int32_t tid, int32_t tgid, unsigned kind,
			  uint32_t state);
void perfswitch__emit_in(struct ps_priv *p, int cpu, uint64_t ts,
			 int32_t tid, int32_t tgid);
void perfswitch__read_rings(struct ps_priv *p);

/* perfswitch_attach.c: the switches of the leader @pid made after its
 * exit record, stated at @ts; attach to the launched command @pid (the
 * backend's .attach). */
void perfswitch__settle_leader(struct ps_priv *p, int cpu, uint64_t ts,
			       int32_t pid, int32_t ppid);
int perfswitch__attach(void *priv, pid_t pid);

#endif
