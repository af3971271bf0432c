/*
 * hist_kernel.c - the kernel's own hist triggers, for `ctxmon hist
 * --backend kernel` and for comparing the user-space evaluator with the
 * kernel: synthetic events go to tracefs synthetic_events, triggers to the
 * event trigger files of a private instance (instances/ctxmon-<pid>, made
 * and removed as the ftrace backend does), and the tables are read back
 * from the instance's hist files.
 *
 * Closing removes what was installed: every trigger still listed in the
 * trigger files of the events used (those reading another trigger's
 * variables first: passes repeat until none is left), the instance, then
 * the synthetic events this object defined.  Nothing outside the instance
 * is written except synthetic_events, which is only appended to.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ctxmon/hist.h>

#include "capture/ftrace.h"
#include "internal.h"

struct ctxmon_hist_kernel {
	char tracefs[256];
	struct ftrace_inst *inst;
	char **events;		/* "sys/event" with a trigger, in order */
	size_t nevents;
	char **synths;		/* definitions written, to undo */
	size_t nsynths;
	char err[1024];
};

static int write_append(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	ssize_t n;
	int err = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

/* A tracefs file whole (a hist can be long: 1 GiB at most), or NULL. */
static char *read_all(const char *path)
{
	size_t len;

	return sys__read_text(path, (size_t)1 << 30, &len);
}

/* The last entry of an error_log, if any, as the kernel wrote it. */
static void last_error(struct ctxmon_hist_kernel *k, const char *dir,
		       const char *what, int err)
{
	char path[512], *log, *last;

	snprintf(path, sizeof(path), "%s/error_log", dir);
	log = read_all(path);
	last = log ? strrchr(log, '[') : NULL;
	/* an entry starts at "[  123.456] "; the caret line ends it */
	while (last && last > log && last[-1] != '\n')
		last = memrchr(log, '[', last - log);
	if (last && *last)
		snprintf(k->err, sizeof(k->err), "%s: %s\n%s", what,
			 strerror(-err), last);
	else
		snprintf(k->err, sizeof(k->err), "%s: %s", what,
			 strerror(-err));
	free(log);
}

struct ctxmon_hist_kernel *ctxmon_hist_kernel_open(const char *tracefs,
						   char *err, size_t errlen)
{
	struct ftrace_inst_opts o = { 0 };
	struct ctxmon_hist_kernel *k = calloc(1, sizeof(*k));
	char path[512];
	int ret;

	if (!k) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	ret = tracefs__find(tracefs, false, k->tracefs, sizeof(k->tracefs),
			    err, errlen);
	if (ret < 0) {
		free(k);
		errno = -ret;
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/hist",
		 k->tracefs);
	if (access(path, F_OK) < 0) {
		snprintf(err, errlen, "this kernel has no hist triggers "
				      "(CONFIG_HIST_TRIGGERS: no %s); drop "
				      "--backend kernel to evaluate them in "
				      "ctxmon", path);
		free(k);
		errno = ENOTSUP;
		return NULL;
	}
	ftrace_inst__clean_stale(k->tracefs);
	k->inst = ftrace_inst__new(k->tracefs, &o, err, errlen);
	if (!k->inst) {
		ret = errno;
		free(k);
		errno = ret;
		return NULL;
	}
	ftrace_inst__tracing(k->inst, true);
	return k;
}

const char *ctxmon_hist_kernel_error(const struct ctxmon_hist_kernel *k)
{
	return k->err;
}

int ctxmon_hist_kernel_define(struct ctxmon_hist_kernel *k, const char *def)
{
	char path[512], **n;
	int ret;

	snprintf(path, sizeof(path), "%s/synthetic_events", k->tracefs);
	ret = write_append(path, def);
	if (ret < 0) {
		last_error(k, k->tracefs, "synthetic_events", ret);
		return ret;
	}
	n = realloc(k->synths, (k->nsynths + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	k->synths = n;
	n[k->nsynths] = strdup(def);
	if (!n[k->nsynths])
		return -ENOMEM;
	k->nsynths++;
	return 0;
}

/* "sys:event", "sys/event" or a bare event name -> "sys/event". */
static int event_dir(struct ctxmon_hist_kernel *k, const char *spec,
		     char *out, size_t len)
{
	const char *sep = strpbrk(spec, ":/");
	glob_t g;
	char pat[512];
	int ret = -ENOENT;

	if (sep) {
		snprintf(out, len, "%.*s/%s", (int)(sep - spec), spec, sep + 1);
		snprintf(pat, sizeof(pat), "%s/events/%s/trigger",
			 ftrace_inst__path(k->inst), out);
		return access(pat, F_OK) ? -ENOENT : 0;
	}
	snprintf(pat, sizeof(pat), "%s/events/*/%s/trigger",
		 ftrace_inst__path(k->inst), spec);
	if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc == 1) {
		char *p = g.gl_pathv[0] + strlen(ftrace_inst__path(k->inst)) +
			  strlen("/events/");

		snprintf(out, len, "%.*s", (int)(strlen(p) - strlen("/trigger")),
			 p);
		ret = 0;
	}
	globfree(&g);
	return ret;
}

int ctxmon_hist_kernel_add(struct ctxmon_hist_kernel *k, const char *event,
			   const char *trigger)
{
	char dir[256], path[768], **n;
	int ret;

	k->err[0] = '\0';
	if (event_dir(k, event, dir, sizeof(dir)) < 0) {
		snprintf(k->err, sizeof(k->err), "no event %s in %s", event,
			 k->tracefs);
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/events/%s/trigger",
		 ftrace_inst__path(k->inst), dir);
	ret = write_append(path, trigger);
	if (ret < 0) {
		last_error(k, ftrace_inst__path(k->inst), dir, ret);
		return ret;
	}
	for (size_t i = 0; i < k->nevents; i++)
		if (!strcmp(k->events[i], dir))
			return 0;
	n = realloc(k->events, (k->nevents + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	k->events = n;
	n[k->nevents] = strdup(dir);
	if (!n[k->nevents])
		return -ENOMEM;
	k->nevents++;
	return 0;
}

char *ctxmon_hist_kernel_read(const struct ctxmon_hist_kernel *k)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < k->nevents; i++) {
		char path[768], *h;

		snprintf(path, sizeof(path), "%s/events/%s/hist",
			 ftrace_inst__path(k->inst), k->events[i]);
		h = read_all(path);
		fprintf(f, "%s# events/%s/hist\n%s", i ? "\n" : "",
			k->events[i], h ? h : "");
		free(h);
	}
	if (fclose(f) != 0) {
		free(buf);
		errno = ENOMEM;
		return NULL;
	}
	return buf;
}

/* Remove the triggers listed in one event's trigger file; how many. */
static int remove_listed(const struct ctxmon_hist_kernel *k, const char *dir)
{
	char path[768], *list, *line, *save = NULL;
	int n = 0;

	snprintf(path, sizeof(path), "%s/events/%s/trigger",
		 ftrace_inst__path(k->inst), dir);
	list = read_all(path);
	for (line = list ? strtok_r(list, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *br = strrchr(line, '[');
		char cmd[4096];

		if (line[0] == '#')
			continue;
		if (br && br > line && br[-1] == ' ')
			br[-1] = '\0';
		snprintf(cmd, sizeof(cmd), "!%s", line);
		if (write_append(path, cmd) == 0)
			n++;
	}
	free(list);
	return n;
}

void ctxmon_hist_kernel_close(struct ctxmon_hist_kernel *k)
{
	if (!k)
		return;
	/* a trigger whose variables another one reads is refused until that
	 * one is gone: go on while passes remove something */
	for (int pass = 0; pass < 8; pass++) {
		int n = 0;

		for (size_t i = k->nevents; i-- > 0;)
			n += remove_listed(k, k->events[i]);
		if (!n)
			break;
	}
	ftrace_inst__free(k->inst);
	for (size_t i = k->nsynths; i-- > 0;) {
		char path[512], cmd[4096];

		snprintf(path, sizeof(path), "%s/synthetic_events", k->tracefs);
		snprintf(cmd, sizeof(cmd), "!%s", k->synths[i]);
		write_append(path, cmd);
		free(k->synths[i]);
	}
	for (size_t i = 0; i < k->nevents; i++)
		free(k->events[i]);
	free(k->events);
	free(k->synths);
	free(k);
}
