/*
 * cmd_serve.c - `ctxmon serve`: the per-cgroup and per-process metrics of
 * include/ctxmon/metrics.h over HTTP for Prometheus (libmicrohttpd).
 *
 * The main thread is the collector: every --interval it reads the kernel
 * maps, renders the Prometheus text and OpenMetrics expositions and swaps
 * them in under a mutex.  libmicrohttpd's threads answer /metrics with a
 * copy of the current texts, so a slow or vanishing client costs only its
 * own connection and never delays a collection (counting itself happens
 * in the kernel).  Signals are blocked in every thread and taken by the
 * collector with sigtimedwait(): SIGTERM/SIGINT stop, SIGHUP re-reads the
 * cgroup names and says so.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include <ctxmon/metrics.h>

#include "cli/cli.h"
#include "cli/opts.h"

static const char *const CMD = "serve";

#define DEFAULT_LISTEN "127.0.0.1:9747"

enum {
	OPT_LISTEN = 0x200, OPT_CGROUP, OPT_PER_PROCESS, OPT_PER_CGROUP,
	OPT_INTERVAL, OPT_TOP, OPT_MAX_CG, OPT_MAX_PROC, OPT_MAX_PAIRS,
	OPT_ONCE, OPT_OPENMETRICS, OPT_RAW_TP, OPT_HELP = 'h',
};

/* The options, once (cli/opts.h): --help, man page and completion. */
static const struct cli_opt serve_opts[] = {
	{ "listen", 0, OPT_LISTEN, "ADDR:PORT",
	  "address to serve on (default " DEFAULT_LISTEN ", this machine "
	  "only; PORT 0 picks a free port; [::1]:PORT for IPv6)" },
	{ "cgroup", 0, OPT_CGROUP, "PATH",
	  "only tasks in this cgroup v2 directory or below (absolute, or "
	  "relative to the v2 mount found in /proc/mounts); repeatable; "
	  "filtered in the kernel" },
	{ "per-cgroup", 0, OPT_PER_CGROUP, NULL,
	  "export the cgroup families only" },
	{ "per-process", 0, OPT_PER_PROCESS, NULL,
	  "export the process families only (default: both)" },
	{ "interval", 0, OPT_INTERVAL, "MS",
	  "read the kernel maps every MS milliseconds (default 1000)" },
	{ "top", 0, OPT_TOP, "N",
	  "series per family: the N most active rows, the rest summed as "
	  "\"other\" (default 20)" },
	{ "max-cgroups", 0, OPT_MAX_CG, "N",
	  "kernel map bound for cgroups (default 4096)" },
	{ "max-processes", 0, OPT_MAX_PROC, "N",
	  "kernel map bound for processes (default 8192)" },
	{ "max-pairs", 0, OPT_MAX_PAIRS, "N",
	  "kernel map bound for (victim, culprit) pairs (default 16384)" },
	{ "once", 0, OPT_ONCE, NULL,
	  "no server: wait one interval, print the exposition, exit" },
	{ "openmetrics", 0, OPT_OPENMETRICS, NULL,
	  "with --once: OpenMetrics instead of Prometheus text" },
	{ "raw-tp", 0, OPT_RAW_TP, NULL,
	  "use the raw_tp programs even where tp_btf loads" },
	{ "help", 'h', OPT_HELP, NULL, "this help" },
	{ NULL },
};

const struct cli_doc serve_doc = {
	.name = "serve",
	.args = "[options]",
	.description =
		"Serve scheduler metrics per cgroup and per process for Prometheus:\n"
		"switches by kind and cause, run / runnable-wait / sleep time,\n"
		"migrations, a wakeup latency histogram charged to the woken task's\n"
		"cgroup, noisy neighbours (victim / culprit cgroups), per-CPU busy and\n"
		"idle time, and ctxmon's own cost.  Counted in the kernel (BPF), read\n"
		"every interval; GET /metrics answers in the Prometheus text format or,\n"
		"when the Accept header asks for it, OpenMetrics; GET /healthz says\n"
		"whether collections succeed.  Metric names: docs/metrics.md.\n\n"
		"SIGTERM or SIGINT stops it; SIGHUP collects at once and re-reads the\n"
		"cgroup names (a renamed cgroup).",
	.groups = (const struct cli_optgroup[]){
		{ "options", serve_opts },
		{ NULL },
	},
	.examples = (const struct cli_example[]){
		{ "serve", "localhost:9747, every cgroup and process" },
		{ "serve --listen 0.0.0.0:9747", "reachable from other machines" },
		{ "serve --cgroup system.slice/nginx.service --per-process",
		  "the processes of one service" },
		{ "serve --once --per-cgroup", "one exposition, for promtool check metrics" },
		{ NULL },
	},
	.notes = "Needs root (BPF programs).  contrib/ctxmon.service runs it under\n"
		 "systemd, contrib/prometheus.yml scrapes it.",
};

struct serve {
	const char *listen;
	const char **cgroups;
	size_t ncgroups;
	bool per_cgroup, per_process, once, om, raw_tp;
	unsigned long interval_ms, top, max_cg, max_proc, max_pairs;

	struct ctxmon_metrics *m;
	pthread_mutex_t lock;
	char *text[2];		/* Prometheus, OpenMetrics */
	size_t len[2];
	struct timespec last_ok; /* CLOCK_MONOTONIC of the last collection */
	int last_err;
};

static int parse(struct serve *s, int argc, char **argv)
{
	unsigned long *num;
	int opt;

	optind = 1;
	while ((opt = cli__getopt(&serve_doc, argc, argv)) != -1) {
		num = NULL;
		switch (opt) {
		case OPT_LISTEN:
			s->listen = optarg;
			break;
		case OPT_CGROUP: {
			const char **n = realloc(s->cgroups, (s->ncgroups + 1) *
								sizeof(*n));

			if (!n) {
				cli__err(CMD, "out of memory");
				return -1;
			}
			s->cgroups = n;
			s->cgroups[s->ncgroups++] = optarg;
			break;
		}
		case OPT_PER_CGROUP:
			s->per_cgroup = true;
			break;
		case OPT_PER_PROCESS:
			s->per_process = true;
			break;
		case OPT_INTERVAL:
			num = &s->interval_ms;
			break;
		case OPT_TOP:
			num = &s->top;
			break;
		case OPT_MAX_CG:
			num = &s->max_cg;
			break;
		case OPT_MAX_PROC:
			num = &s->max_proc;
			break;
		case OPT_MAX_PAIRS:
			num = &s->max_pairs;
			break;
		case OPT_ONCE:
			s->once = true;
			break;
		case OPT_OPENMETRICS:
			s->om = true;
			break;
		case OPT_RAW_TP:
			s->raw_tp = true;
			break;
		case OPT_HELP:
			cli__help(stdout, &serve_doc);
			exit(EXIT_OK);
		default:
			fprintf(stderr, "'ctxmon serve --help' lists the options\n");
			return -1;
		}
		if (num && (cli__parse_uint(optarg, 1000000000ul, num) < 0 ||
			    !*num)) {
			const char *name = "";

			for (const struct cli_opt *o = serve_opts; o->name; o++)
				if (o->key == opt)
					name = o->name;
			cli__err(CMD, "--%s wants a positive whole number, not "
				 "'%s'", name, optarg);
			return -1;
		}
	}
	if (optind < argc) {
		cli__err(CMD, "unexpected argument '%s' (serve runs no command; "
			 "use --cgroup to select tasks)", argv[optind]);
		return -1;
	}
	if (s->per_cgroup && s->per_process) {
		cli__err(CMD, "--per-cgroup and --per-process exclude each "
			 "other (neither: both)");
		return -1;
	}
	if (s->om && !s->once) {
		cli__err(CMD, "--openmetrics goes with --once (the server "
			 "follows each scraper's Accept header)");
		return -1;
	}
	return 0;
}

/* ADDR:PORT, [ADDR6]:PORT or PORT into a socket address. */
static int parse_listen(const char *spec, struct sockaddr_storage *ss,
			socklen_t *sl)
{
	char host[256] = "127.0.0.1", port[16];
	const char *colon = strrchr(spec, ':');
	struct addrinfo hints = { 0 }, *ai = NULL;

	if (!colon) {
		snprintf(port, sizeof(port), "%s", spec);
	} else {
		size_t hl = (size_t)(colon - spec);

		if (hl >= sizeof(host) || !colon[1])
			return -1;
		if (spec[0] == '[' && hl >= 2 && spec[hl - 1] == ']')
			snprintf(host, sizeof(host), "%.*s", (int)hl - 2,
				 spec + 1);
		else if (hl)
			snprintf(host, sizeof(host), "%.*s", (int)hl, spec);
		snprintf(port, sizeof(port), "%s", colon + 1);
	}
	for (const char *p = port; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	if (!port[0] || atol(port) > 65535)
		return -1;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &ai) || !ai)
		return -1;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sl = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static bool is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)ss;

		return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)ss;

		return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
	}
	return false;
}

/* ---- HTTP --------------------------------------------------------------- */

/* The q of the best media range of @accept matching @type ("a/b"), 0 if
 * none matches.  Wildcards count for text only (@wild). */
static double accept_q(const char *accept, const char *type, bool wild)
{
	double best = 0;
	const char *p = accept;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char item[256], *semi, *q, *t;
		double qv = 1;

		snprintf(item, sizeof(item), "%.*s",
			 (int)(len < sizeof(item) ? len : sizeof(item) - 1), p);
		semi = strchr(item, ';');
		if (semi)
			*semi = '\0';
		t = item;
		while (*t == ' ' || *t == '\t')
			t++;
		for (char *e = t + strlen(t); e > t && (e[-1] == ' ');)
			*--e = '\0';
		if (semi) {
			q = strstr(semi + 1, "q=");
			if (q)
				qv = atof(q + 2);
			/* OpenMetrics 0.0.1 is not what we write */
			if (!strcmp(type, "application/openmetrics-text") &&
			    strstr(semi + 1, "version=") &&
			    !strstr(semi + 1, "version=1.0.0"))
				qv = 0;
		}
		if (!strcasecmp(t, type) ||
		    (wild && (!strcmp(t, "*/*") || !strcasecmp(t, "text/*"))))
			if (qv > best)
				best = qv;
		p = end ? end + 1 : NULL;
	}
	return best;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     const char *type, const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_len, void **con_cls)
{
	struct serve *s = cls;
	enum MHD_Result ret;
	static const char *const text = "text/plain; charset=utf-8";

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)con_cls;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, text,
			     "GET or HEAD only\n", 17);
	if (!strcmp(url, "/metrics")) {
		const char *acc = MHD_lookup_connection_value(
			c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
		double om = acc ? accept_q(acc, "application/openmetrics-text",
					   false) :
				  0;
		double pt = acc ? accept_q(acc, "text/plain", true) : 1;
		int f = om > 0 && om >= pt ? CTXMON_METRICS_OPENMETRICS :
					     CTXMON_METRICS_PROMETHEUS;

		pthread_mutex_lock(&s->lock);
		if (!s->text[f])
			ret = reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, text,
				    "no collection yet\n", 18);
		else
			ret = reply(c, MHD_HTTP_OK,
				    ctxmon_metrics_content_type(
					    (enum ctxmon_metrics_format)f),
				    s->text[f], s->len[f]);
		pthread_mutex_unlock(&s->lock);
		return ret;
	}
	if (!strcmp(url, "/healthz")) {
		struct timespec now;
		char msg[160];
		double age;
		bool ok;

		clock_gettime(CLOCK_MONOTONIC, &now);
		pthread_mutex_lock(&s->lock);
		age = (double)(now.tv_sec - s->last_ok.tv_sec) +
		      (double)(now.tv_nsec - s->last_ok.tv_nsec) / 1e9;
		ok = s->text[0] && !s->last_err &&
		     age < 3.0 * (double)s->interval_ms / 1000 + 1;
		if (ok)
			snprintf(msg, sizeof(msg), "ok\n");
		else if (s->last_err)
			snprintf(msg, sizeof(msg), "collection failed: %s\n",
				 strerror(s->last_err));
		else
			snprintf(msg, sizeof(msg),
				 "no collection for %.1f s\n", age);
		pthread_mutex_unlock(&s->lock);
		return reply(c, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
			     text, msg, strlen(msg));
	}
	if (!strcmp(url, "/")) {
		static const char idx[] = "ctxmon serve: /metrics (Prometheus "
					  "text or OpenMetrics), /healthz\n";

		return reply(c, MHD_HTTP_OK, text, idx, sizeof(idx) - 1);
	}
	return reply(c, MHD_HTTP_NOT_FOUND, text, "not found: try /metrics\n",
		     24);
}

/* ---- collector ------------------------------------------------------------ */

static int collect(struct serve *s)
{
	char *t[2] = { NULL, NULL };
	size_t l[2] = { 0, 0 };
	int ret = ctxmon_metrics_collect(s->m);

	for (int f = 0; f < 2 && !ret; f++)
		ret = ctxmon_metrics_render(s->m, (enum ctxmon_metrics_format)f,
					    &t[f], &l[f]);
	pthread_mutex_lock(&s->lock);
	if (!ret) {
		for (int f = 0; f < 2; f++) {
			free(s->text[f]);
			s->text[f] = t[f];
			s->len[f] = l[f];
			t[f] = NULL;
		}
		clock_gettime(CLOCK_MONOTONIC, &s->last_ok);
	}
	s->last_err = ret < 0 ? -ret : 0;
	pthread_mutex_unlock(&s->lock);
	free(t[0]);
	free(t[1]);
	return ret;
}

static int run(struct serve *s)
{
	struct ctxmon_metrics_opts mo = { .sz = sizeof(mo) };
	struct sockaddr_storage ss;
	struct MHD_Daemon *d = NULL;
	struct timespec iv;
	socklen_t sl = 0;
	sigset_t set;
	int ret = EXIT_FAIL, sig;

	if (!s->once && parse_listen(s->listen, &ss, &sl) < 0) {
		cli__err(CMD, "--listen %s: give ADDR:PORT with a numeric "
			 "address, e.g. 127.0.0.1:9747 or [::1]:9747",
			 s->listen);
		return EXIT_USAGE;
	}
	mo.cgroups = s->cgroups;
	mo.ncgroups = s->ncgroups;
	mo.per_cgroup = s->per_cgroup;
	mo.per_process = s->per_process;
	mo.top = (unsigned)s->top;
	mo.max_cgroups = (unsigned)s->max_cg;
	mo.max_processes = (unsigned)s->max_proc;
	mo.max_pairs = (unsigned)s->max_pairs;
	mo.force_raw_tp = s->raw_tp;

	/* every thread (libmicrohttpd's too) inherits this mask: the
	 * signals are taken here, by sigtimedwait() */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	s->m = ctxmon_metrics_open(&mo);
	if (!s->m) {
		cli__err(CMD, "%s%s", ctxmon_metrics_last_error(),
			 errno == EPERM ? " (run as root)" : "");
		return EXIT_FAIL;
	}
	/* a first collection right away makes the rows' baselines */
	if (collect(s) < 0) {
		cli__err(CMD, "reading the kernel maps: %s",
			 strerror(s->last_err));
		goto out;
	}
	iv.tv_sec = (time_t)(s->interval_ms / 1000);
	iv.tv_nsec = (long)(s->interval_ms % 1000) * 1000000;
	if (s->once) {
		sig = sigtimedwait(&set, NULL, &iv);
		if (sig > 0 && sig != SIGHUP) {
			ret = 128 + sig;
			goto out;
		}
		if (collect(s) < 0) {
			cli__err(CMD, "reading the kernel maps: %s",
				 strerror(s->last_err));
			goto out;
		}
		errno = 0;
		if (fwrite(s->text[s->om], 1, s->len[s->om], stdout) !=
			    s->len[s->om] ||
		    fflush(stdout) == EOF) {
			cli__err(CMD, "writing the exposition: %s",
				 strerror(errno ? errno : EIO));
			goto out;
		}
		ret = EXIT_OK;
		goto out;
	}

	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
				     (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 :
								 0),
			     0, NULL, NULL, on_request, s,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
			     MHD_OPTION_THREAD_POOL_SIZE, 4u,
			     MHD_OPTION_CONNECTION_LIMIT, 512u,
			     MHD_OPTION_CONNECTION_TIMEOUT, 30u,
			     MHD_OPTION_END);
	if (!d) {
		cli__err(CMD, "cannot listen on %s: %s (is the port in use? "
			 "pick another with --listen)", s->listen,
			 strerror(errno ? errno : EADDRINUSE));
		goto out;
	}
	{
		struct ctxmon_metrics_info mi;
		const union MHD_DaemonInfo *di =
			MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
		char host[64] = "";
		unsigned port = di ? di->port : 0;

		if (ss.ss_family == AF_INET)
			inet_ntop(AF_INET,
				  &((struct sockaddr_in *)&ss)->sin_addr, host,
				  sizeof(host));
		else
			inet_ntop(AF_INET6,
				  &((struct sockaddr_in6 *)&ss)->sin6_addr,
				  host, sizeof(host));
		fprintf(stderr,
			"ctxmon serve: listening on http://%s%s%s:%u/metrics "
			"(%s), every %lu ms, %s programs\n",
			ss.ss_family == AF_INET6 ? "[" : "", host,
			ss.ss_family == AF_INET6 ? "]" : "", port,
			is_loopback(&ss) ?
				"this machine only; --listen 0.0.0.0:PORT "
				"to expose it" :
				"reachable from the network",
			s->interval_ms,
			!ctxmon_metrics_get_info(s->m, &mi) && mi.tp_btf ?
				"tp_btf" :
				"raw_tp");
	}
	for (;;) {
		sig = sigtimedwait(&set, NULL, &iv);
		if (sig == SIGTERM || sig == SIGINT) {
			fprintf(stderr, "ctxmon serve: %s, stopping\n",
				sig == SIGTERM ? "SIGTERM" : "SIGINT");
			ret = EXIT_OK;
			break;
		}
		if (sig == SIGHUP) {
			ctxmon_metrics_forget_names(s->m);
			fprintf(stderr, "ctxmon serve: SIGHUP, collecting now "
					"and re-reading the cgroup names\n");
		}
		if (collect(s) < 0)
			cli__err(CMD, "reading the kernel maps: %s (/healthz "
				 "says so)", strerror(s->last_err));
	}
out:
	if (d)
		MHD_stop_daemon(d);
	ctxmon_metrics_close(s->m);
	return ret;
}

int cmd_serve(int argc, char **argv)
{
	struct serve s = { .listen = DEFAULT_LISTEN, .interval_ms = 1000 };
	int ret;

	pthread_mutex_init(&s.lock, NULL);
	if (parse(&s, argc, argv) < 0) {
		free(s.cgroups);
		return EXIT_USAGE;
	}
	ret = run(&s);
	free(s.text[0]);
	free(s.text[1]);
	free(s.cgroups);
	pthread_mutex_destroy(&s.lock);
	return ret;
}
