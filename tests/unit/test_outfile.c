/*
 * test_outfile.c - output files all or nothing (ctxmon/outfile.h): a
 * commit replaces the target with what was written, keeping its mode; a
 * discard, or a commit whose data did not reach the disk (RLIMIT_FSIZE
 * standing in for a full disk), leaves the old file byte for byte and
 * nothing beside it; a link keeps pointing where it did; devices are
 * written in place; PATH.part is found, kept and never overwritten;
 * ctxmon_outfile_unlink_all() removes every work file.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <ctxmon/outfile.h>

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ctxmon-outfile.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *path_of(const char *name)
{
	static char p[2][128];
	static int k;

	k ^= 1;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static void put(const char *name, const char *text, mode_t mode)
{
	FILE *f = fopen(path_of(name), "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path_of(name), mode), 0);
}

static char *get(const char *name)
{
	static char buf[256];
	FILE *f = fopen(path_of(name), "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* how many entries the directory holds, . and .. aside */
static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void test_commit_replaces(void **state)
{
	struct ctxmon_outfile *o;
	struct stat sb;

	(void)state;
	put("t", "old", 0640);
	o = ctxmon_outfile_open(path_of("t"), 0);
	assert_non_null(o);
	fputs("new text", ctxmon_outfile_stream(o));
	/* until the commit the old file is there, the new one beside it */
	assert_string_equal(get("t"), "old");
	assert_int_equal(entries(), 2);
	assert_int_equal(ctxmon_outfile_commit(o), 0);
	assert_string_equal(get("t"), "new text");
	assert_int_equal(entries(), 1);
	assert_int_equal(stat(path_of("t"), &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0640);
}

static void test_discard_keeps(void **state)
{
	struct ctxmon_outfile *o;

	(void)state;
	put("t", "old", 0644);
	o = ctxmon_outfile_open(path_of("t"), 0);
	assert_non_null(o);
	fputs("half of it", ctxmon_outfile_stream(o));
	ctxmon_outfile_discard(o, 1);
	assert_string_equal(get("t"), "old");
	assert_int_equal(entries(), 1);
	/* a new path that fails leaves no file at all */
	o = ctxmon_outfile_open(path_of("n"), 0);
	assert_non_null(o);
	ctxmon_outfile_discard(o, 0);
	assert_null(get("n"));
	assert_int_equal(entries(), 1);
	ctxmon_outfile_discard(NULL, 0);
	assert_int_equal(ctxmon_outfile_commit(NULL), 0);
}

/* A write past RLIMIT_FSIZE fails with EFBIG as a full disk fails with
 * ENOSPC: the commit reports it and the old file stays. */
static void test_failed_write_keeps(void **state)
{
	struct rlimit old, lim = { .rlim_cur = 100, .rlim_max = RLIM_INFINITY };
	struct ctxmon_outfile *o;
	FILE *f;

	(void)state;
	put("t", "old", 0644);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim.rlim_max = old.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	o = ctxmon_outfile_open(path_of("t"), 0);
	assert_non_null(o);
	f = ctxmon_outfile_stream(o);
	for (int i = 0; i < 1000; i++)
		fputs("0123456789", f);
	assert_int_equal(ctxmon_outfile_commit(o), -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_string_equal(get("t"), "old");
	assert_int_equal(entries(), 1);
}

static void test_link_followed(void **state)
{
	struct ctxmon_outfile *o;
	char buf[128];
	ssize_t n;

	(void)state;
	put("real", "old", 0644);
	assert_int_equal(symlink("real", path_of("link")), 0);
	o = ctxmon_outfile_open(path_of("link"), 0);
	assert_non_null(o);
	fputs("via link", ctxmon_outfile_stream(o));
	assert_int_equal(ctxmon_outfile_commit(o), 0);
	n = readlink(path_of("link"), buf, sizeof(buf) - 1);
	assert_int_equal(n, 4);
	assert_string_equal(get("real"), "via link");
	assert_int_equal(entries(), 2);
}

static void test_devices_in_place(void **state)
{
	struct ctxmon_outfile *o;

	(void)state;
	o = ctxmon_outfile_open("/dev/null", 0);
	assert_non_null(o);
	assert_string_equal(ctxmon_outfile_work_path(o), "/dev/null");
	fputs("gone", ctxmon_outfile_stream(o));
	assert_int_equal(ctxmon_outfile_commit(o), 0);
	o = ctxmon_outfile_open("-", 0);
	assert_non_null(o);
	assert_true(ctxmon_outfile_is_stdout(o));
	assert_ptr_equal(ctxmon_outfile_stream(o), stdout);
	assert_null(ctxmon_outfile_work_path(o));
	assert_int_equal(ctxmon_outfile_commit(o), 0);
	errno = 0;
	assert_null(ctxmon_outfile_open("-", CTXMON_OUTFILE_SEEKABLE));
	assert_int_equal(errno, ESPIPE);
	assert_null(ctxmon_outfile_open("", 0));
	assert_int_equal(errno, EINVAL);
}

static void test_part(void **state)
{
	struct ctxmon_outfile *o;
	struct stat sb;

	(void)state;
	put("r", "old", 0644);
	o = ctxmon_outfile_open(path_of("r"),
				CTXMON_OUTFILE_PART | CTXMON_OUTFILE_PRIVATE);
	assert_non_null(o);
	assert_string_equal(ctxmon_outfile_work_path(o), path_of("r.part"));
	assert_int_equal(write(ctxmon_outfile_fd(o), "rec", 3), 3);
	/* a second capture to the same path would lose the first's part */
	errno = 0;
	assert_null(ctxmon_outfile_open(path_of("r"), CTXMON_OUTFILE_PART));
	assert_int_equal(errno, EEXIST);
	/* kept when asked, as a capture killed hard would leave it */
	ctxmon_outfile_discard(o, 1);
	assert_string_equal(get("r.part"), "rec");
	assert_string_equal(get("r"), "old");
	assert_int_equal(unlink(path_of("r.part")), 0);
	o = ctxmon_outfile_open(path_of("r"),
				CTXMON_OUTFILE_PART | CTXMON_OUTFILE_PRIVATE);
	assert_non_null(o);
	assert_int_equal(write(ctxmon_outfile_fd(o), "whole", 5), 5);
	assert_int_equal(ctxmon_outfile_commit(o), 0);
	assert_string_equal(get("r"), "whole");
	assert_null(get("r.part"));
	assert_int_equal(stat(path_of("r"), &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
}

static void test_unlink_all(void **state)
{
	struct ctxmon_outfile *a, *b, *p;

	(void)state;
	a = ctxmon_outfile_open(path_of("a"), 0);
	b = ctxmon_outfile_open(path_of("b"), 0);
	p = ctxmon_outfile_open(path_of("p"), CTXMON_OUTFILE_PART);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(p);
	assert_int_equal(entries(), 3);
	ctxmon_outfile_unlink_all();
	/* the work files are gone; PATH.part is meant to stay */
	assert_int_equal(entries(), 1);
	assert_non_null(get("p.part"));
	ctxmon_outfile_discard(a, 0);
	ctxmon_outfile_discard(b, 0);
	ctxmon_outfile_discard(p, 0);
	assert_int_equal(entries(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_commit_replaces, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_discard_keeps, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_failed_write_keeps, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_link_followed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_devices_in_place, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_part, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlink_all, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
