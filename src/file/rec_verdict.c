/*
 * rec_verdict.c - a recording's integrity verdict (docs/integrity.md):
 * what the reader got of the file (whole, cut at an offset, damaged at
 * one, chunks failing their checksum) and what the capture lost per CPU,
 * built once from the reader's state and rendered as the one line and
 * the one JSON object that every command reading a recording gives, so
 * that no two commands describe the same file differently.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <ctxmon/record.h>

#include "file/rec_reader_int.h"
#include "output/json_out.h"

/* CPUs named in the line; the JSON has them all */
#define LINE_CPUS 8

void ctxmon_reader_get_verdict(const struct ctxmon_reader *r,
			       struct ctxmon_verdict *out)
{
	uint64_t ncpus = 0;

	memset(out, 0, sizeof(*out));
	out->finished = r->state == R_DONE &&
			(r->result == 0 || r->result == -EBADMSG);
	out->truncated = r->info.truncated;
	out->damaged = r->info.damaged;
	out->problem_offset = r->info.problem_offset;
	out->problem = r->err;
	out->checksum_failures = r->crc_failures;
	out->events = r->info.events;
	out->bytes = r->info.bytes;
	out->lost = r->lost;
	out->lost_records = r->lost_records;
	out->lost_unknown = r->lost_unknown;
	out->lost_per_cpu = r->lost_cpu;
	out->nlost_cpu = r->nlost_cpu;
	if (ctxmon_reader_meta_u64(r, CTXMON_META_NCPUS, &ncpus) < 0 ||
	    ncpus > 65536)
		ncpus = 0;
	out->ncpus = (unsigned)(ncpus > r->nlost_cpu ? ncpus : r->nlost_cpu);
	/* a cut-short end marker is read, yet the file is not whole */
	out->complete = r->info.complete && !r->info.truncated &&
			!r->info.damaged && !r->lost_records;
}

/* snprintf() that appends at *@n, counting past @len as snprintf does. */
static void add(char *buf, size_t len, size_t *n, const char *fmt, ...)
	PRINTF_LIKE(4, 5);

static void add(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(*n < len ? buf + *n : NULL, *n < len ? len - *n : 0, fmt,
		      ap);
	va_end(ap);
	if (k > 0)
		*n += (size_t)k;
}

/* The reader's "offset N: why" without its offset, which the line gives
 * already. */
static const char *why_of(const struct ctxmon_verdict *v)
{
	const char *p = v->problem ? v->problem : "";

	if (!strncmp(p, "offset ", 7)) {
		const char *c = strstr(p, ": ");

		if (c)
			return c + 2;
	}
	return p;
}

int ctxmon_verdict_format(const struct ctxmon_verdict *v, const char *name,
			  char *buf, size_t len)
{
	size_t n = 0, shown = 0;

	if (len)
		buf[0] = '\0';
	add(buf, len, &n, "%s: %s: ", name ? name : "recording",
	    v->complete ? "complete" : "incomplete");
	if (v->damaged)
		add(buf, len, &n,
		    "damaged at offset %" PRIu64 ": %s, not read "
		    "past it",
		    v->problem_offset, why_of(v));
	else if (v->truncated)
		add(buf, len, &n, "truncated at offset %" PRIu64 ": %s",
		    v->problem_offset, why_of(v));
	else
		add(buf, len, &n, "read to its end");
	add(buf, len, &n, "; %" PRIu64 " events read; %u checksum failure%s; ",
	    v->events, v->checksum_failures,
	    v->checksum_failures == 1 ? "" : "s");
	if (!v->lost_records) {
		add(buf, len, &n, "nothing lost");
		return (int)n;
	}
	add(buf, len, &n, "lost %s%" PRIu64 " events in %" PRIu64 " record%s",
	    v->lost_unknown ? "at least " : "", v->lost, v->lost_records,
	    v->lost_records == 1 ? "" : "s");
	if (v->lost_unknown)
		add(buf, len, &n, " (%" PRIu64 " without a count)",
		    v->lost_unknown);
	for (size_t c = 0; c < v->nlost_cpu; c++) {
		if (!v->lost_per_cpu[c])
			continue;
		if (shown == LINE_CPUS) {
			add(buf, len, &n, ", ...");
			break;
		}
		add(buf, len, &n, "%s CPU %zu: %" PRIu64, shown ? "," : ";", c,
		    v->lost_per_cpu[c]);
		shown++;
	}
	return (int)n;
}

int ctxmon_verdict_write_json(const struct ctxmon_verdict *v, FILE *f)
{
	fprintf(f, "{\"complete\":%s,\"truncated_at\":",
		v->complete ? "true" : "false");
	if (v->truncated && !v->damaged)
		fprintf(f, "%" PRIu64, v->problem_offset);
	else
		fputs("null", f);
	fputs(",\"damaged_at\":", f);
	if (v->damaged)
		fprintf(f, "%" PRIu64, v->problem_offset);
	else
		fputs("null", f);
	fputs(",\"problem\":", f);
	if (v->problem && v->problem[0])
		json__put_str(f, v->problem);
	else
		fputs("null", f);
	fprintf(f,
		",\"checksum_failures\":%u,\"events_read\":%" PRIu64
		",\"bytes_read\":%" PRIu64 ",\"lost\":%" PRIu64
		",\"lost_records\":%" PRIu64 ",\"lost_unknown\":%" PRIu64
		",\"lost_per_cpu\":[",
		v->checksum_failures, v->events, v->bytes, v->lost,
		v->lost_records, v->lost_unknown);
	for (size_t c = 0; c < v->ncpus || c < v->nlost_cpu; c++)
		fprintf(f, "%s%" PRIu64, c ? "," : "",
			c < v->nlost_cpu ? v->lost_per_cpu[c] : 0);
	fputs("]}", f);
	return ferror(f) ? -EIO : 0;
}
