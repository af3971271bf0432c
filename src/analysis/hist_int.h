/*
 * hist_int.h - what the hist-trigger modules share: the parsed trigger
 * (expressions, variables, actions, filter), the event definitions the
 * fields are looked up in, and the tables the evaluator fills.
 *
 * hist_parse.c turns strings into these structs, hist_eval.c runs them over
 * events, hist_out.c prints the tables; hist_events.c knows which event
 * fields ctxmon's events carry.
 */
#ifndef CTXMON_HIST_INT_H
#define CTXMON_HIST_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <ctxmon/hist.h>

#include "internal.h"

#define HIST_MAX_KEYS 3
#define HIST_MAX_VALS 8
#define HIST_MAX_VARS 16
#define HIST_MAX_REFS 16
#define HIST_MAX_ACTS 4
#define HIST_MAX_PARAMS 16
#define HIST_MAX_SORT 2
#define HIST_MAX_FIELDS 32
#define HIST_DEFAULT_SIZE 2048
#define HIST_COMM_LEN 16

/* field value kinds */
enum { HF_U = 0, HF_S, HF_STR };

struct hist_field_def {
	char *name;
	char *type;	/* as the format file says ("pid_t", "char[16]") */
	uint8_t kind;	/* HF_* */
	uint8_t id;	/* built-in events: which member; synthetic: index */
};

struct hist_trig;

/* An event triggers can attach to: built in (a ctxmon event type) or
 * synthetic. */
struct hist_evdef {
	char *system, *name;
	int type;		/* enum ctxmon_event_type, -1 synthetic */
	struct hist_field_def *fields;
	int nfields;
	bool synthetic, defined;
	struct hist_trig **trigs;	/* attached, in order of addition */
	int ntrigs;
};

enum hist_xkind {
	HX_FIELD, HX_CONST, HX_VARREF, HX_TS, HX_CPU, HX_PID, HX_COMM, HX_HITCOUNT,
	HX_STACK, HX_ADD, HX_SUB, HX_MUL, HX_DIV, HX_NEG,
};

/* modifiers */
#define HM_HEX		(1u << 0)
#define HM_SYM		(1u << 1)
#define HM_SYMOFF	(1u << 2)
#define HM_EXECNAME	(1u << 3)
#define HM_SYSCALL	(1u << 4)
#define HM_LOG2		(1u << 5)
#define HM_BUCKETS	(1u << 6)
#define HM_USECS	(1u << 7)
#define HM_PERCENT	(1u << 8)
#define HM_GRAPH	(1u << 9)
#define HM_STACKTRACE	(1u << 10)

/* An expression: a field, a constant, a variable reference, an operation. */
struct hist_expr {
	int kind;		/* HX_* */
	unsigned mods;		/* HM_* */
	uint64_t buckets;
	int field;		/* HX_FIELD: index in the event's fields */
	bool str, sgn;		/* string-valued; signed */
	uint64_t cval;		/* HX_CONST */
	struct hist_expr *l, *r;
	char *name;		/* field or variable name as written */
	char *text;		/* the expression as the kernel prints it */
	/* HX_VARREF, after binding */
	struct hist_trig *vt;	/* trigger defining the variable */
	int vidx;		/* its index there */
	int ref;		/* slot in the referring trigger's refs */
	bool read_once;		/* used in an expression: unset once read */
	int pos;		/* offset in the command, for errors */
};

struct hist_var {
	char *name;
	struct hist_expr *e;
};

enum { HA_ONMATCH = 1, HA_ONMAX, HA_ONCHANGE };
enum { HA_TRACE = 1, HA_SAVE, HA_SNAPSHOT };

struct hist_action {
	int handler, action;
	char *msys, *mevent;		/* onmatch(SYS.EVENT) */
	struct hist_expr *track;	/* onmax(VAR) / onchange(VAR) */
	char *track_str;
	char *synth_name;		/* trace(): the synthetic event */
	struct hist_evdef *synth;
	bool trace_kw;			/* written as trace(NAME,...) */
	char *pstr[HIST_MAX_PARAMS];	/* params as written */
	struct hist_expr *params[HIST_MAX_PARAMS];
	int nparams;
	int save_base;			/* save(): first slot in entry->saved */
};

/* filter tree */
enum { HFT_AND = 1, HFT_OR, HFT_NOT, HFT_PRED };
enum { HOP_EQ = 1, HOP_NE, HOP_LT, HOP_LE, HOP_GT, HOP_GE, HOP_BAND,
       HOP_GLOB };

struct hist_filter {
	int kind;
	struct hist_filter *l, *r;
	/* predicate */
	struct hist_expr *field;
	int op;
	uint64_t num;
	char *str;
};

struct hist_entry {
	uint64_t key[HIST_MAX_KEYS];
	uint64_t hitcount;
	uint64_t sum[HIST_MAX_VALS];
	uint64_t var[HIST_MAX_VARS];
	uint32_t varset;
	uint64_t track[HIST_MAX_ACTS];
	uint8_t track_set;
	uint64_t saved[HIST_MAX_PARAMS];
	const char *comm;	/* current's comm when created (.execname) */
};

/* Entries of one trigger, or shared by the triggers of one name. */
struct hist_table {
	struct hist_entry *ents;
	uint32_t *slots;	/* index + 1, 0 empty */
	size_t n, cap, max, nslots;
	uint64_t hits, drops;
	int users;
	/* snapshot(): the global maximum and its key */
	bool snap;
	uint64_t snap_val, snap_key[HIST_MAX_KEYS];
};

struct hist_trig {
	struct hist_evdef *ev;
	char *cmd;		/* the command as given, for errors */
	char *name;
	struct hist_expr *keys[HIST_MAX_KEYS];
	int nkeys;
	struct hist_expr *vals[HIST_MAX_VALS];
	int nvals;
	unsigned hc_mods;	/* modifiers on an explicit hitcount */
	bool nohitcount;
	struct hist_var vars[HIST_MAX_VARS];
	int nvars;
	struct { int idx; bool desc; } sort[HIST_MAX_SORT]; /* idx: -1 hitcount,
						 * 0.. vals, 100+ keys */
	int nsort;
	unsigned size;
	char *clock;
	bool paused, cmd_pause, cmd_cont, cmd_clear;
	struct hist_action acts[HIST_MAX_ACTS];
	int nacts;
	int nsaved;
	struct hist_filter *filter;
	char *filter_str;
	struct hist_expr *refs[HIST_MAX_REFS];
	int nrefs;
	bool uses_ts;
	int ctl;		/* 1 enable_hist, 2 disable_hist: no table */
	char *ctl_event;	/* its target "SYS:EVENT" */
	long ctl_count;		/* times left, -1 unlimited */
	struct hist_table *tab;
	char *info;		/* trigger info line, built on demand */
};

/* A synthetic event instance being delivered. */
struct hist_rec {
	const struct hist_evdef *def;
	const struct ctxmon_event *ev;	/* built-in events */
	const uint64_t *svals;		/* synthetic: one value per field */
	uint64_t ts;
	int cpu, pid;
	const char *comm;		/* current's comm, interned */
};

struct hist_comm {
	int32_t tid;
	const char *comm;
};

struct ctxmon_hist {
	struct hist_evdef **evs;
	int nevs;
	struct hist_trig **trigs;	/* in order of addition */
	size_t ntrigs;
	struct strtab *strs;
	struct hist_comm *comms;	/* tid -> comm, open addressing */
	size_t ncomms, capcomms;
	const char *arch;
	int depth;			/* synthetic event nesting */
	int evaldepth;			/* variable references nesting */
	char err[1024];
	int errpos;
};

/* hist_events.c */
int hist__builtin_events(struct ctxmon_hist *h);
struct hist_evdef *hist__find_event(struct ctxmon_hist *h, const char *spec);
int hist__field_index(const struct hist_evdef *d, const char *name);
uint64_t hist__field_value(const struct hist_rec *r, int idx);
const struct hist_evdef *hist__event_def(const struct ctxmon_hist *h,
					 unsigned type);
void hist__evdef_free(struct hist_evdef *d);
/* current comm of @tid as interned, or NULL */
const char *hist__comm(const struct ctxmon_hist *h, int32_t tid);
int hist__set_comm(struct ctxmon_hist *h, int32_t tid, const char *comm);

/* hist_parse.c: parsing context, shared with hist_expr.c */
struct pctx {
	struct ctxmon_hist *h;
	struct hist_evdef *ev;
	struct hist_trig *t;
	char *buf;		/* working copy, same offsets as cmd */
	const char *cmd;
	char loc[160];
};
/* error at @at (a pointer into p->buf, NULL: no caret); -EINVAL */
int hist__perr(struct pctx *p, const char *at, const char *msg);
char *hist__strip(char *s);
/* next piece of *s up to a top-level @sep (not in parentheses or quotes) */
char *hist__split(char **s, char sep);
/* hist_expr.c */
struct hist_expr *hist__parse_item(struct pctx *p, char *s, int *err);
void hist__expr_text(FILE *f, const struct hist_expr *e);
const char *hist__mod_name(unsigned m);
/* hist_parse.c */
int hist__parse_trigger(struct ctxmon_hist *h, struct hist_evdef *ev,
			const char *cmd, struct hist_trig **out, bool *remove);
int hist__parse_synth(struct ctxmon_hist *h, const char *def);
void hist__trig_free(struct hist_trig *t);
const char *hist__trig_info(struct hist_trig *t);
bool hist__trig_same(const struct hist_trig *a, const struct hist_trig *b);
struct hist_expr *hist__expr_new(int kind, int pos);
void hist__expr_free(struct hist_expr *e);
void hist__expr_print(FILE *f, const struct hist_expr *e, bool mods);
int hist__parse_filter(struct ctxmon_hist *h, struct hist_evdef *ev,
		       const char *loc, const char *str,
		       struct hist_filter **out);
void hist__filter_free(struct hist_filter *f);
bool hist__filter_match(const struct ctxmon_hist *h,
			const struct hist_filter *f, const struct hist_rec *r);
void hist__set_err(struct ctxmon_hist *h, const char *loc, const char *cmd,
		   int pos, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* hist_eval.c */
/* a leaf's value (field, common_pid, cpu, comm, timestamp) */
uint64_t hist__leaf(const struct ctxmon_hist *h, const struct hist_rec *r,
		   const struct hist_expr *e);
void hist__run(struct ctxmon_hist *h, const struct hist_rec *r);
struct hist_table *hist__table_new(unsigned size);
void hist__table_free(struct hist_table *t);
void hist__table_clear(struct hist_table *t);

/* hist_out.c */
int hist__print_trig(FILE *f, const struct ctxmon_hist *h,
		     struct hist_trig *t);
int hist__print_trig_json(FILE *f, const struct ctxmon_hist *h,
			  struct hist_trig *t);

#endif
