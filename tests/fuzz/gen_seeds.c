/*
 * gen_seeds.c - write the reader's seed corpus: small recordings that
 * cover every record type, metadata, task declarations, several chunks,
 * an empty file, a cut file and one ended by a write error.  Run by hand
 * when the format changes:
 *
 *   cc -Iinclude -Isrc -D_GNU_SOURCE tests/fuzz/gen_seeds.c build/libctxmon.a \
 *      $(pkg-config --libs libbpf libzstd libtraceevent libdw libelf \
 *        libprotobuf-c sqlite3 libmicrohttpd ncursesw) -lz -ltracecmd -lm \
 *      -lpthread -o /tmp/gen_seeds && /tmp/gen_seeds tests/fuzz/corpus/reader
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctxmon/record.h>

static const char *const comms[] = { "bash", "swapper/0", "Web Content",
				     "kworker/0:1" };

static void events(struct ctxmon_record *w, int n)
{
	for (int i = 0; i < n; i++) {
		struct ctxmon_event ev = { 0 };

		ev.ts = 1000000000ull + (uint64_t)i * 1733;
		ev.type = (uint16_t)(1 + i % (CTXMON_EV__MAX - 1));
		ev.cpu = i % 3;
		ev.tid = 100 + i % 5;
		ev.tgid = 100;
		switch (ev.type) {
		case CTXMON_EV_SWITCH:
			ev.sw.prev_tid = ev.tid;
			ev.sw.prev_tgid = 100;
			ev.sw.prev_prio = 120;
			ev.sw.prev_state = i % 4 ? CTXMON_STATE_S : 0;
			ev.sw.preempt = i % 8 == 0;
			ev.sw.kind = ev.sw.prev_state ? CTXMON_SW_VOLUNTARY : 0;
			ev.sw.prev_comm = comms[i % 4];
			ev.sw.next_tid = 100 + (i + 1) % 5;
			ev.sw.next_tgid = 100;
			ev.sw.next_prio = 120;
			ev.sw.next_comm = comms[(i + 1) % 4];
			break;
		case CTXMON_EV_WAKING:
		case CTXMON_EV_WAKEUP:
		case CTXMON_EV_WAKEUP_NEW:
			ev.wake.tid = 100 + (i + 2) % 5;
			ev.wake.prio = 120;
			ev.wake.target_cpu = i % 2;
			ev.wake.comm = comms[(i + 2) % 4];
			break;
		case CTXMON_EV_MIGRATE:
			ev.migrate.tid = 102;
			ev.migrate.prio = 120;
			ev.migrate.orig_cpu = 0;
			ev.migrate.dest_cpu = 1;
			break;
		case CTXMON_EV_FORK:
			ev.fork.parent_tid = ev.tid;
			ev.fork.child_tid = 200 + i;
			ev.fork.child_tgid = 200 + i;
			ev.fork.child_comm = "bash";
			break;
		case CTXMON_EV_EXEC:
			ev.exec.tid = ev.exec.old_tid = ev.tid;
			ev.exec.comm = "ls";
			break;
		case CTXMON_EV_EXIT:
			ev.exit.tid = ev.tid;
			ev.exit.prio = 120;
			ev.exit.group_dead = 1;
			ev.exit.comm = "ls";
			break;
		case CTXMON_EV_IRQ_ENTRY:
		case CTXMON_EV_IRQ_EXIT:
		case CTXMON_EV_SOFTIRQ_ENTRY:
		case CTXMON_EV_SOFTIRQ_EXIT:
			ev.irq.vec = i % 10;
			ev.irq.ret = ev.type == CTXMON_EV_IRQ_EXIT;
			break;
		case CTXMON_EV_SYS_ENTER:
		case CTXMON_EV_SYS_EXIT:
			ev.sys.id = 232;
			ev.sys.ret = -4;
			break;
		case CTXMON_EV_LOST:
			ev.lost.count = 7;
			ev.lost.start_ts = ev.ts - 5000;
			ev.lost.end_ts = ev.ts;
			break;
		case CTXMON_EV_ORPHAN:
			ev.orphan.tid = 100 + (i + 3) % 5;
			ev.orphan.parent = ev.tid;
			ev.orphan.why = i % 2;
			break;
		}
		if (ctxmon_record_write(w, &ev))
			return;
	}
}

static struct ctxmon_record *create(const char *dir, const char *name,
				    unsigned chunk)
{
	struct ctxmon_record_opts o = { .sz = sizeof(o),
					.chunk_events = chunk };
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return ctxmon_record_create(path, &o);
}

int main(int argc, char **argv)
{
	static const uint64_t lost[2] = { 0, 3 };
	struct ctxmon_record *w;
	char path[4096];

	if (argc != 2)
		return 2;
	w = create(argv[1], "empty.ctxmon", 0);
	if (!w || ctxmon_record_close(w))
		return 1;

	w = create(argv[1], "all-types.ctxmon", 40);
	if (!w ||
	    ctxmon_record_set_meta_str(w, CTXMON_META_KERNEL, "6.18.44") ||
	    ctxmon_record_set_meta_u64(w, CTXMON_META_NCPUS, 2) ||
	    ctxmon_record_set_meta_u64s(w, CTXMON_META_LOST_START, lost, 2) ||
	    ctxmon_record_set_meta_str(w, CTXMON_META_IRQ_PREFIX "3", "eth0") ||
	    ctxmon_record_add_format(w, "sched", "sched_waking",
				     "name: sched_waking\nID: 375\n") ||
	    ctxmon_record_add_task(w, 1, 1, "systemd") ||
	    ctxmon_record_add_task(w, 100, 100, "bash") ||
	    ctxmon_record_add_task(w, 101, 100, "bash worker"))
		return 1;
	events(w, 150);
	if (ctxmon_record_set_meta_u64s(w, CTXMON_META_LOST_STOP, lost, 2) ||
	    ctxmon_record_close(w))
		return 1;

	/* Cut in the middle of its second chunk, like a killed writer. */
	w = create(argv[1], "cut.ctxmon", 30);
	if (!w)
		return 1;
	events(w, 100);
	if (ctxmon_record_close(w))
		return 1;
	snprintf(path, sizeof(path), "%s/cut.ctxmon", argv[1]);
	{
		struct stat st;

		if (stat(path, &st) || truncate(path, st.st_size * 2 / 3))
			return 1;
	}

	/* Ended by a full disk: the end marker says why. */
	{
		struct rlimit old, lim;

		signal(SIGXFSZ, SIG_IGN);
		if (getrlimit(RLIMIT_FSIZE, &old))
			return 1;
		lim = old;
		lim.rlim_cur = 700;
		w = create(argv[1], "disk-full.ctxmon", 30);
		if (!w || setrlimit(RLIMIT_FSIZE, &lim))
			return 1;
		for (int i = 0; i < 10; i++)
			events(w, 30);
		if (ctxmon_record_close(w) == 0 ||
		    setrlimit(RLIMIT_FSIZE, &old))
			return 1;
	}
	return 0;
}
