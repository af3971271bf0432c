/*
 * decode/textparse.h - ftrace text lines to ctxmon events and back.
 *
 * The parser reads one line at a time, so it serves both a live reader of
 * trace_pipe (an ftrace-text backend) and the importer of saved traces
 * (trace_pipe or trace output, `trace-cmd report`, Android systrace and
 * atrace).  The formatter writes the trace_pipe form with this kernel's
 * print formats; what it writes, the parser reads back to the same line.
 */
#ifndef CTXMON_TEXTPARSE_H
#define CTXMON_TEXTPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ctxmon/event.h>

#include "internal.h"

/* Longest line the parser accepts; longer ones are bad lines. */
#define TEXTPARSE_LINE_MAX 8192

enum textparse_kind {
	TP_EVENT = 1,	/* an event, in ->ev */
	TP_LOST,	/* "CPU:n [LOST m EVENTS]": ->lost_cpu, ->lost_count */
};

struct textparse_line {
	enum textparse_kind kind;
	/*
	 * The event: every field its line shows; ts in ns; tgid from a
	 * "(tgid)" column or -1; sw.kind derived from the state the way the
	 * kernel counts nvcsw/nivcsw.  Comms are interned in the parser's
	 * string table.
	 */
	struct ctxmon_event ev;
	const char *comm;	/* the line's task comm; NULL for "<...>" */
	const char *aux_comm;	/* migrate's comm=, fork's parent comm= */
	const char *irq_name;	/* irq_handler_entry's name= */
	/* trace-cmd's buffer instance of the line ("NAME: " before its
	 * task), interned; NULL for the top buffer */
	const char *instance;
	int32_t lost_cpu;
	uint64_t lost_count;
};

struct textparse;

/* A parser interning comms in @strs (the caller's, kept alive as long as
 * the comms are used).  NULL and errno on failure. */
struct textparse *textparse__new(struct strtab *strs);
void textparse__free(struct textparse *p);

/*
 * Parse one line (a trailing newline is allowed).  Returns 1 with @out
 * filled, 0 for a line that carries nothing ctxmon models (blank, comment,
 * header, an event type ctxmon does not use), or -EINVAL when the line
 * does not parse, with a reason in *why (static text).  -ENOMEM when a
 * comm cannot be stored.  Lines of an HTML systrace file outside its
 * trace data are skipped.
 */
int textparse__line(struct textparse *p, const char *line, size_t len,
		    struct textparse_line *out, const char **why);

/* The flavour seen so far: "trace_pipe", "trace-cmd", "systrace", or
 * "unknown" before the first event line. */
const char *textparse__flavour(const struct textparse *p);

/* How the formatter names what events carry only as numbers. */
struct text_names {
	/* Current comm of a tid, NULL when unknown. */
	const char *(*comm)(void *ctx, int32_t tid);
	/* Name of an irq line, NULL when unknown. */
	const char *(*irq)(void *ctx, int32_t irq);
	void *ctx;
};

#define TEXTPARSE_NS (1u << 0)	/* = CTXMON_TEXT_NS: 9 decimals */

/*
 * Write @ev as a trace_pipe line without newline into @buf (cut to @len,
 * NUL terminated).  Returns the length it needed, or -EINVAL for an event
 * type that has no text form.  @names may be NULL (every task "<...>").
 */
int textparse__format(const struct ctxmon_event *ev, unsigned flags,
		      const struct text_names *names, char *buf, size_t len);

/* The switch kind the kernel's nvcsw/nivcsw rule gives for a state. */
uint8_t textparse__switch_kind(uint32_t state, int preempt);

#endif
