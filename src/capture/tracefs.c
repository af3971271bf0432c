/*
 * tracefs.c - where the kernel's tracing files are.
 *
 * The perf and ftrace backends read event ids and formats from tracefs.  It
 * is usually at /sys/kernel/tracing, but may be mounted elsewhere, or only
 * reachable as tracing/ under a debugfs mount on kernels before 4.1, so the
 * mount table is the authority.  Mounting changes the machine, so it is
 * done only when the caller asked for it (--mount-tracefs); libtracefs is
 * not used here because its lookup mounts tracefs on its own.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "internal.h"

#define DEFAULT_MOUNT "/sys/kernel/tracing"

/* A usable tracing directory has events/ (ids and formats live there):
 * 0, or -errno (-EACCES matters: tracefs is root-only by default). */
static int has_events(const char *dir)
{
	char path[4096];
	struct stat st;
	int n;

	n = snprintf(path, sizeof(path), "%s/events", dir);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int copy_out(const char *dir, char *buf, size_t len)
{
	size_t n = strlen(dir);

	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, dir, n + 1);
	return 0;
}

/*
 * Whether this kernel has the tracefs file system (4.1 on).  Its debugfs
 * then holds tracing/ as an automount of tracefs: a stat through it would
 * mount tracefs there, a change to the machine nobody asked for, and a
 * tracefs mounted there is in the mount table as tracefs anyway.  Before
 * 4.1 tracing/ is a plain debugfs directory.
 */
static bool kernel_has_tracefs(void)
{
	char line[256];
	bool yes = false;
	FILE *f = fopen("/proc/filesystems", "re");

	while (f && !yes && fgets(line, sizeof(line), f))
		yes = strstr(line, "\ttracefs\n") != NULL;
	if (f)
		fclose(f);
	return yes;
}

/* What scan_mounts() found so far. */
struct scan {
	char debugfs[4096], tracefs[4096], denied[4096];
	bool plain_debugfs;
};

static int scan_one(const char *type, const char *dir, void *ctx)
{
	struct scan *sc = ctx;
	char sub[4096];
	int n, r;

	if (!strcmp(type, "debugfs")) {
		if (!sc->plain_debugfs)
			return 0;
		n = snprintf(sub, sizeof(sub), "%s/tracing", dir);
		if (n < 0 || (size_t)n >= sizeof(sub))
			return 0;
		dir = sub;
	} else if (strcmp(type, "tracefs")) {
		return 0;
	}
	r = has_events(dir);
	if (r == -EACCES && !sc->denied[0])
		fmt__buf(sc->denied, sizeof(sc->denied), "%s", dir);
	if (r)
		return 0;
	if (dir == sub) {
		if (!sc->debugfs[0])
			fmt__buf(sc->debugfs, sizeof(sc->debugfs), "%s", dir);
	} else if (!sc->tracefs[0] || !strcmp(dir, DEFAULT_MOUNT)) {
		fmt__buf(sc->tracefs, sizeof(sc->tracefs), "%s", dir);
	}
	return 0;
}

/*
 * Scan the mount table: a tracefs mount wins (the default place first),
 * a debugfs mount's tracing/ is the fallback on kernels without tracefs.
 * 0, -ENOENT, or -EACCES with the unreadable mount point in @buf.
 */
static int scan_mounts(char *buf, size_t len)
{
	struct scan sc = { .plain_debugfs = !kernel_has_tracefs() };
	int ret = sys__mounts(scan_one, &sc);

	if (ret < 0)
		return ret;
	if (sc.tracefs[0])
		return copy_out(sc.tracefs, buf, len);
	if (sc.debugfs[0])
		return copy_out(sc.debugfs, buf, len);
	if (sc.denied[0] && copy_out(sc.denied, buf, len) == 0)
		return -EACCES;
	return -ENOENT;
}

/* Tracing needs both: say what to grant, and the sysctl that gates perf. */
#define DENIED_FMT                                                         \
	"no permission to read tracefs at %s: run as root, or grant "      \
	"CAP_PERFMON and read access to tracefs "                          \
	"(kernel.perf_event_paranoid is %d)"

int tracefs__find(const char *hint, bool do_mount, char *buf, size_t len,
		  char *err, size_t errlen)
{
	int ret;

	if (hint && *hint) {
		/* an explicit path that is wrong is an error, not a hint to
		 * look elsewhere: the user meant that one */
		ret = has_events(hint);
		if (ret == -EACCES) {
			fmt__buf(err, errlen, DENIED_FMT, hint, sys__perf_paranoid());
			goto out;
		}
		if (ret) {
			fmt__buf(
				err, errlen,
				"%s is not a tracefs directory (no events/ in it)",
				hint);
			ret = -ENOENT;
			goto out;
		}
		ret = copy_out(hint, buf, len);
		if (ret)
			fmt__buf(err, errlen, "tracefs path too long: %s",
				 hint);
		goto out;
	}

	ret = scan_mounts(buf, len);
	if (ret == -EACCES) {
		fmt__buf(err, errlen, DENIED_FMT, buf, sys__perf_paranoid());
		goto out;
	}
	if (ret != -ENOENT) {
		if (ret)
			fmt__buf(err, errlen, "cannot read /proc/mounts: %s",
				 strerror(-ret));
		goto out;
	}
	if (!do_mount) {
		fmt__buf(
			err, errlen,
			"tracefs is not mounted: run 'mount -t tracefs nodev " DEFAULT_MOUNT
			"' or pass --mount-tracefs");
		goto out;
	}

	if (mount("nodev", DEFAULT_MOUNT, "tracefs", 0, NULL) < 0 &&
	    errno != EBUSY) {
		ret = -errno;
		fmt__buf(err, errlen,
			 "cannot mount tracefs at " DEFAULT_MOUNT ": %s",
			 strerror(errno));
		goto out;
	}
	if (has_events(DEFAULT_MOUNT)) {
		ret = -ENOENT;
		fmt__buf(err, errlen,
			 "tracefs at " DEFAULT_MOUNT
			 " has no events/: is CONFIG_EVENT_TRACING off?");
		goto out;
	}
	ret = copy_out(DEFAULT_MOUNT, buf, len);
out:
	return ret;
}
