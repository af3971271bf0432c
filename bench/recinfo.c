/*
 * recinfo.c - what a ctxmon recording holds, for the benchmarks: events by
 * type, losses by CPU, bytes per event, and how long reading it took.
 *
 * Usage: recinfo FILE
 *
 * Prints one JSON object on stdout: file bytes, events, events per type,
 * the backend that recorded it,
 * lost (the sum of the stream's lost events) and lost_per_cpu, the
 * recording's own lost.start/lost.stop counters when it has them, whether
 * the file is complete, and read_s, the time the library took to decode
 * every event (a floor for any analysis of the file).  It uses only the
 * public API (ctxmon/record.h), so it measures what an embedding program
 * gets.  Exit 1 when the file cannot be opened or read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/event.h>
#include <ctxmon/record.h>

#define MAX_CPUS 1024

struct counts {
	uint64_t by_type[CTXMON_EV__MAX];
	uint64_t lost, lost_records;
	uint64_t lost_cpu[MAX_CPUS];
	int ncpus;
};

static int on_event(const struct ctxmon_event *ev, void *ctx)
{
	struct counts *c = ctx;

	if (ev->type < CTXMON_EV__MAX)
		c->by_type[ev->type]++;
	if (ev->cpu >= 0 && ev->cpu < MAX_CPUS && ev->cpu >= c->ncpus)
		c->ncpus = ev->cpu + 1;
	if (ev->type == CTXMON_EV_LOST) {
		c->lost += ev->lost.count;
		c->lost_records++;
		if (ev->cpu >= 0 && ev->cpu < MAX_CPUS)
			c->lost_cpu[ev->cpu] += ev->lost.count;
	}
	return 0;
}

static void print_u64s(const struct ctxmon_reader *r, const char *key)
{
	uint64_t v[MAX_CPUS];
	size_t n = ctxmon_reader_meta_u64s(r, key, v, MAX_CPUS);

	printf(", \"%s\": [", key);
	for (size_t i = 0; i < n && i < MAX_CPUS; i++)
		printf("%s%" PRIu64, i ? ", " : "", v[i]);
	printf("]");
}

int main(int argc, char **argv)
{
	static struct counts c;
	struct ctxmon_reader_info info;
	struct ctxmon_reader *r;
	struct timespec t0, t1;
	struct stat st;
	uint64_t total = 0;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: recinfo FILE\n");
		return 2;
	}
	if (stat(argv[1], &st) < 0) {
		perror(argv[1]);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = ctxmon_reader_open(argv[1]);
	if (!r) {
		fprintf(stderr, "recinfo: %s: %s\n", argv[1],
			ctxmon_record_last_error());
		return 1;
	}
	ret = ctxmon_reader_read(r, on_event, &c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ctxmon_reader_get_info(r, &info);
	for (int t = 0; t < CTXMON_EV__MAX; t++)
		if (t != CTXMON_EV_LOST)
			total += c.by_type[t];
	printf("{\"file\": \"%s\", \"bytes\": %jd, \"events\": %" PRIu64
	       ", \"switches\": %" PRIu64 ", \"complete\": %s, "
	       "\"truncated\": %s, \"damaged\": %s, \"read_ret\": %d, "
	       "\"read_s\": %.6f, \"lost\": %" PRIu64
	       ", \"lost_records\": %" PRIu64 ", \"lost_per_cpu\": [",
	       argv[1], (intmax_t)st.st_size, total,
	       c.by_type[CTXMON_EV_SWITCH], info.complete ? "true" : "false",
	       info.truncated ? "true" : "false",
	       info.damaged ? "true" : "false", ret,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       c.lost, c.lost_records);
	for (int i = 0; i < c.ncpus; i++)
		printf("%s%" PRIu64, i ? ", " : "", c.lost_cpu[i]);
	printf("], \"by_type\": {");
	for (int t = 1, first = 1; t < CTXMON_EV__MAX; t++) {
		if (!c.by_type[t])
			continue;
		printf("%s\"%s\": %" PRIu64, first ? "" : ", ",
		       ctxmon_event_type_name(t), c.by_type[t]);
		first = 0;
	}
	printf("}");
	{
		const char *be = ctxmon_reader_meta_str(r, CTXMON_META_BACKEND);

		printf(", \"backend\": \"%s\"", be ? be : "");
	}
	print_u64s(r, CTXMON_META_LOST_START);
	print_u64s(r, CTXMON_META_LOST_STOP);
	printf("}\n");
	ctxmon_reader_close(r);
	return ret < 0 ? 1 : 0;
}
