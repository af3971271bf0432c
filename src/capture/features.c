/*
 * features.c - what the running kernel offers (include/ctxmon/features.h),
 * probed, never inferred from the version: BTF, tp_btf, BPF map types,
 * hist triggers, perf_event_paranoid, tracefs and cgroup v2 mounts, and
 * the signal-sleep probe (src/capture/bpf/sigprobe.bpf.c).
 *
 * The signal-sleep probe: two processes pinned to one CPU loop on
 * clock_nanosleep(); the BPF program signals each at the syscall's entry,
 * so every sleep starts with a signal pending and the two take turns on
 * the CPU.  The program counts the switches the kernel kept runnable and
 * counted voluntary, by the state the tracepoint showed.  It stops at a
 * few such switches or after a second, kills both and unloads.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <ctxmon/features.h>

#include "internal.h"
#include "sigprobe.h"
#include "sigprobe.skel.h"

#define PROBE_VERDICT 4		/* switches enough for a verdict */
#define PROBE_MAX_MS 1000	/* slow machines (qemu TCG) need long */

const char *ctxmon_features_btf_path(void)
{
	const char *p = getenv("CTXMON_BTF");

	return p && *p ? p : "/sys/kernel/btf/vmlinux";
}

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l;
	(void)f;
	(void)ap;
	return 0;
}

int ctxmon_features_preempt_rt(void)
{
	struct utsname u;

	if (sys__read_int("/sys/kernel/realtime", 0) == 1)
		return 1;
	if (uname(&u) < 0)
		return -1;
	return strstr(u.version, "PREEMPT_RT") != NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* A probe process: pinned to @cpu, waits for the go (EOF on @go), then
 * sleeps and is signalled, over and over.  Only async-signal-safe calls:
 * the caller may have threads. */
static void probe_child(int go, int cpu)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	cpu_set_t set;
	sigset_t mask;
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&mask);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	for (int i = 0; i < 200000; i++)
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
	_exit(0);
}

static enum ctxmon_sigsleep run_probe(char *why, size_t len)
{
	enum ctxmon_sigsleep v = CTXMON_SIGSLEEP_UNKNOWN;
	libbpf_print_fn_t old = libbpf_set_print(quiet);
	struct sigprobe_bpf *skel = NULL;
	pid_t kid[2] = { -1, -1 };
	int go[2] = { -1, -1 }, cpu = 0, err;
	struct sigprobe_result r = { 0 };
	cpu_set_t set;

	if (access(ctxmon_features_btf_path(), R_OK) < 0) {
		fmt__buf(why, len, "no kernel BTF at %s",
			 ctxmon_features_btf_path());
		goto out;
	}
	skel = sigprobe_bpf__open();
	if (!skel) {
		fmt__buf(why, len, "cannot open the probe: %s", strerror(errno));
		goto out;
	}
	skel->rodata->nanosleep_nr = SYS_clock_nanosleep;
	skel->rodata->signo = SIGUSR1;
	err = sigprobe_bpf__load(skel);
	if (!err)
		err = sigprobe_bpf__attach(skel);
	if (err) {
		fmt__buf(why, len, "cannot load the probe (BPF with BTF): %s",
			 strerror(err < 0 ? -err : EINVAL));
		goto out;
	}
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set); cpu++)
			;
	if (pipe2(go, O_CLOEXEC) < 0) {
		fmt__buf(why, len, "pipe: %s", strerror(errno));
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		__u32 k;
		__u64 zero = 0;

		kid[i] = fork();
		if (kid[i] == 0) {
			close(go[1]);
			probe_child(go[0], cpu);
		}
		if (kid[i] < 0) {
			fmt__buf(why, len, "fork: %s", strerror(errno));
			goto out;
		}
		k = (__u32)kid[i];
		if (bpf_map__update_elem(skel->maps.probes, &k, sizeof(k), &zero,
					 sizeof(zero), BPF_ANY) < 0) {
			fmt__buf(why, len, "probe map: %s", strerror(errno));
			goto out;
		}
	}
	close(go[0]);
	close(go[1]);
	go[0] = go[1] = -1;
	for (int ms = 0; ms < PROBE_MAX_MS; ms += 2) {
		struct timespec t = { 0, 2 * 1000 * 1000 };

		nanosleep(&t, NULL);
		r = skel->bss->res;
		if (r.shown_sleep + r.shown_run >= PROBE_VERDICT)
			break;
	}
	if (r.shown_sleep && !r.shown_run) {
		v = CTXMON_SIGSLEEP_SHOWN_SLEEP;
		fmt__buf(why, len, "probed: %llu of %llu signal-cut sleeps "
			 "shown in their sleep state",
			 (unsigned long long)r.shown_sleep,
			 (unsigned long long)r.sent);
	} else if (r.shown_run && !r.shown_sleep) {
		v = CTXMON_SIGSLEEP_SHOWN_RUNNING;
		fmt__buf(why, len, "probed: %llu of %llu signal-cut sleeps "
			 "shown R",
			 (unsigned long long)r.shown_run,
			 (unsigned long long)r.sent);
	} else if (r.shown_run) {
		fmt__buf(why, len, "probed: signal-cut sleeps shown both ways "
			 "(%llu S, %llu R)", (unsigned long long)r.shown_sleep,
			 (unsigned long long)r.shown_run);
	} else {
		fmt__buf(why, len, "probed: no signal-cut sleep seen in %d ms "
			 "(%llu signals sent)", PROBE_MAX_MS,
			 (unsigned long long)r.sent);
	}
out:
	for (int i = 0; i < 2; i++) {
		if (kid[i] > 0) {
			kill(kid[i], SIGKILL);
			while (waitpid(kid[i], NULL, 0) < 0 && errno == EINTR)
				;
		}
	}
	if (go[0] >= 0)
		close(go[0]);
	if (go[1] >= 0)
		close(go[1]);
	sigprobe_bpf__destroy(skel);
	libbpf_set_print(old);
	return v;
}

enum ctxmon_sigsleep ctxmon_features_sigsleep(char *why, size_t len)
{
	static int done;
	static enum ctxmon_sigsleep v;
	static char msg[160];

	if (!done) {
		v = run_probe(msg, sizeof(msg));
		done = 1;
	}
	if (why && len)
		fmt__buf(why, len, "%s", msg);
	return v;
}

int ctxmon_features_probe(struct ctxmon_features *f, unsigned flags)
{
	libbpf_print_fn_t old;
	struct utsname u;
	struct btf *btf;
	char err[256], path[512];
	int r;

	if (!f)
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	if (uname(&u) == 0)
		fmt__buf(f->release, sizeof(f->release), "%s", u.release);
	fmt__buf(f->btf_path, sizeof(f->btf_path), "%s",
		 ctxmon_features_btf_path());

	old = libbpf_set_print(quiet);
	btf = btf__parse(f->btf_path, NULL);
	f->btf = btf != NULL;
	/* tp_btf: the probe's programs load (BPF_PROG_TYPE_TRACING alone
	 * says nothing: some kernels take tp_btf but refuse fentry) */
	f->tp_btf = 0;
	if (btf && btf__find_by_name_kind(btf, "btf_trace_sched_switch",
					  BTF_KIND_TYPEDEF) > 0) {
		struct sigprobe_bpf *skel = sigprobe_bpf__open();

		f->tp_btf = skel && !sigprobe_bpf__load(skel);
		sigprobe_bpf__destroy(skel);
	}
	btf__free(btf);
	r = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL);
	f->ringbuf = r < 0 ? -1 : r;
	r = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL);
	f->task_storage = r < 0 ? -1 : r;
	libbpf_set_print(old);

	f->perf_event_paranoid =
		sys__read_int(SYS_PARANOID_PATH, -100);
	if (tracefs__find(NULL, false, f->tracefs, sizeof(f->tracefs), err,
			  sizeof(err)) < 0)
		f->tracefs[0] = '\0';
	if (f->tracefs[0]) {
		fmt__buf(path, sizeof(path),
			 "%s/events/sched/sched_switch/hist", f->tracefs);
		f->hist_triggers = access(path, F_OK) == 0;
	} else {
		f->hist_triggers = -1;
	}
	(void)sys__find_mount("cgroup2", f->cgroup2, sizeof(f->cgroup2));
	f->preempt_rt = ctxmon_features_preempt_rt();
	if (flags & CTXMON_PROBE_SIGSLEEP)
		f->sigsleep = ctxmon_features_sigsleep(f->sigsleep_why,
						       sizeof(f->sigsleep_why));
	else
		fmt__buf(f->sigsleep_why, sizeof(f->sigsleep_why),
			 "not probed");
	return 0;
}
