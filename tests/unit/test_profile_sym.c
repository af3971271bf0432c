/*
 * test_profile_sym - the copies of a process's mappings that the profile
 * symbolizes user stacks with (profile/profile_sym.c), on a child
 * process: a copy taken before a file was mapped does not hold its
 * addresses; psym__refresh for a stack taken after the copy copies again
 * and then does, however young the old copy was; a copy taken after the
 * stack is kept (-EAGAIN); an unchanged copy keeps its symbol tables (1).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "profile/profile_sym.h"

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A child that, at each byte it reads from @cmd, maps a page of
 * /bin/true executable at an address far from the others (MAP_FIXED_NOREPLACE
 * of a hint; wherever the kernel likes if taken) and writes the address to
 * @ans; its mappings stay as they are while it waits. */
static pid_t mapper(int *cmd, int *ans)
{
	int c[2], a[2];
	pid_t pid;

	assert_int_equal(pipe(c), 0);
	assert_int_equal(pipe(a), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char b;

		close(c[1]);
		close(a[0]);
		while (read(c[0], &b, 1) == 1) {
			int fd = open("/bin/true", O_RDONLY);
			void *m = mmap((void *)0x5a0000000000ull, 4096,
				       PROT_READ | PROT_EXEC,
				       MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);

			if (m == MAP_FAILED)
				m = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
					 MAP_PRIVATE, fd, 0);
			if (write(a[1], &m, sizeof(m)) != sizeof(m))
				_exit(1);
		}
		_exit(0);
	}
	close(c[0]);
	close(a[1]);
	*cmd = c[1];
	*ans = a[0];
	return pid;
}

static void test_refresh_after_map(void **state)
{
	struct psym *s = psym__new();
	int cmd, ans, st;
	pid_t child = mapper(&cmd, &ans);
	uint64_t t_before, t_stack, addr;
	char buf[512];
	void *m;

	(void)state;
	assert_non_null(s);
	t_before = now_ns();	/* a stack taken before the copy */
	assert_int_equal(psym__snapshot(s, child), 0);

	/* a file mapped executable after the copy, as ld.so maps libc
	 * after exec: a stack taken now has addresses in it */
	assert_int_equal(write(cmd, "m", 1), 1);
	assert_int_equal(read(ans, &m, sizeof(m)), sizeof(m));
	assert_true(m != MAP_FAILED);
	addr = (uint64_t)(uintptr_t)m + 16;
	t_stack = now_ns();
	assert_int_equal(psym__user(s, child, addr, false, buf, sizeof(buf)),
			 -ENOENT);

	/* for the stack taken before it, the copy holds all it can: kept */
	assert_int_equal(psym__refresh(s, child, t_before), -EAGAIN);
	/* it is microseconds old, older than the stack: copied again */
	assert_int_equal(psym__refresh(s, child, t_stack), 0);
	assert_int_equal(psym__user(s, child, addr, false, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "true"));
	/* nothing mapped since: the same mappings, tables kept */
	assert_int_equal(psym__refresh(s, child, now_ns()), 1);
	assert_int_equal(psym__user(s, child, addr, false, buf, sizeof(buf)), 0);

	close(cmd);
	close(ans);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	psym__free(s);
}

/* a process that is gone: -errno, and no copy made */
static void test_gone(void **state)
{
	struct psym *s = psym__new();
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (!pid)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_true(psym__snapshot(s, pid) < 0);
	assert_false(psym__has(s, pid));
	assert_true(psym__refresh(s, pid, now_ns()) < 0);
	psym__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refresh_after_map),
		cmocka_unit_test(test_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
