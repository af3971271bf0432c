/*
 * noperf - run a command where perf_event_open() and bpf() are refused.
 *
 * Usage: noperf CMD [ARGS...]
 *
 * Installs a seccomp filter (no new privileges first, so any user may)
 * that makes perf_event_open fail with EACCES and bpf with EPERM, as a
 * kernel with perf_event_paranoid 3 (Debian's own) or a container's
 * profile would, then execs CMD; the filter holds for CMD and its
 * children.  Lets the tests see ctxmon fall back to its /proc tier
 * without changing the machine's settings.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "noperf: add this architecture's AUDIT_ARCH"
#endif

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		/* another ABI's numbers would mean other calls: allow */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(f) / sizeof(f[0]),
		.filter = f,
	};

	if (argc < 2) {
		fprintf(stderr, "usage: noperf CMD [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		fprintf(stderr, "noperf: seccomp: %s\n", strerror(errno));
		return 126;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "noperf: %s: %s\n", argv[1], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
