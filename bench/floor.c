/*
 * floor - load one of bench/floor.bpf.c's reference tracers and run it
 * until SIGINT or SIGTERM (bench.py starts it like any other tracer).
 *
 * Usage: floor count|ring [OBJECT]
 *   count  the per-CPU sched_switch counter; prints the count at the end
 *   ring   the ring-buffer streamer; the reader drains the ring every
 *          5 ms (no wakeups per record) and prints records and drops
 * OBJECT defaults to floor.bpf.o next to this program.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static unsigned long long records;

static int on_rec(void *ctx, void *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	records++;
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char path[PATH_MAX];
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct ring_buffer *rb = NULL;
	struct bpf_link *links[3];
	int nlinks = 0, ring = !strcmp(mode, "ring");

	if (!ring && strcmp(mode, "count")) {
		fprintf(stderr, "usage: floor count|ring [OBJECT]\n");
		return 2;
	}
	if (argc > 2) {
		snprintf(path, sizeof(path), "%s", argv[2]);
	} else {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		char *slash;

		if (n < 0)
			return 1;
		path[n] = '\0';
		slash = strrchr(path, '/');
		snprintf(slash + 1, sizeof(path) - (size_t)(slash + 1 - path),
			 "floor.bpf.o");
	}
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		fprintf(stderr, "floor: cannot open %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
		const char *name = bpf_program__name(prog);

		bpf_program__set_autoload(prog,
					  ring ? !strncmp(name, "floor_ring", 10) :
						 !strcmp(name, "floor_count"));
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "floor: cannot load %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog))
			continue;
		links[nlinks] = bpf_program__attach(prog);
		if (!links[nlinks]) {
			fprintf(stderr, "floor: cannot attach %s: %s\n",
				bpf_program__name(prog), strerror(errno));
			return 1;
		}
		nlinks++;
	}
	if (ring) {
		rb = ring_buffer__new(
			bpf_map__fd(bpf_object__find_map_by_name(obj, "ring")),
			on_rec, NULL, NULL);
		if (!rb) {
			fprintf(stderr, "floor: no ring buffer: %s\n",
				strerror(errno));
			return 1;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		if (rb)
			ring_buffer__consume(rb);
	}
	if (rb) {
		ring_buffer__consume(rb);
		printf("floor ring: %llu records\n", records);
		ring_buffer__free(rb);
	} else {
		int fd = bpf_map__fd(bpf_object__find_map_by_name(obj,
								 "counts"));
		int ncpu = libbpf_num_possible_cpus();
		unsigned long long *v = calloc(ncpu > 0 ? ncpu : 1,
					       sizeof(*v)), sum = 0;
		__u32 k = 0;

		if (v && ncpu > 0 && !bpf_map_lookup_elem(fd, &k, v))
			for (int i = 0; i < ncpu; i++)
				sum += v[i];
		printf("floor count: %llu switches\n", sum);
		free(v);
	}
	for (int i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	bpf_object__close(obj);
	return 0;
}
