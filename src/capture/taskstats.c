/*
 * taskstats.c - the kernel's per-task counters over generic netlink
 * (include/ctxmon/taskstats.h), as seed 004's getcsw reads them.
 *
 * One NETLINK_GENERIC socket: the family id of "TASKSTATS" is asked from
 * the controller, then TASKSTATS_CMD_GET with a pid or tgid gives one
 * answer, and TASKSTATS_CMD_ATTR_REGISTER_CPUMASK makes the kernel send a
 * TASKSTATS_CMD_NEW message for each task that exits on those CPUs (and
 * one for its process when the last thread goes).
 *
 * The struct taskstats payload is read field by field, and a field only
 * when the payload holds it: the kernel's struct may be longer (newer) or
 * shorter (older) than the one in the headers this was built with.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <sys/socket.h>

#include <ctxmon/taskstats.h>

#define BUF_SIZE 16384
#define RCVBUF (1 << 20)

struct ctxmon_taskstats_conn {
	int fd;
	uint16_t family;
	uint32_t seq;
	char *cpulist; /* registered, to deregister at close */
	uint64_t dropped;
	uint8_t *buf; /* BUF_SIZE, one datagram */
};

/* ---- netlink messages ------------------------------------------------ */

struct msg {
	struct nlmsghdr n;
	struct genlmsghdr g;
	uint8_t attrs[512];
};

static void put_attr(struct msg *m, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a =
		(struct nlattr *)((uint8_t *)m + NLMSG_ALIGN(m->n.nlmsg_len));

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((uint8_t *)a + NLA_HDRLEN, data, len);
	m->n.nlmsg_len = NLMSG_ALIGN(m->n.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void init_msg(struct ctxmon_taskstats_conn *c, struct msg *m,
		     uint16_t family, uint8_t cmd, uint8_t version)
{
	memset(m, 0, sizeof(*m));
	m->n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m->n.nlmsg_type = family;
	m->n.nlmsg_flags = NLM_F_REQUEST;
	m->n.nlmsg_seq = ++c->seq;
	m->g.cmd = cmd;
	m->g.version = version;
}

static int send_msg(struct ctxmon_taskstats_conn *c, struct msg *m)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	ssize_t n;

	do
		n = sendto(c->fd, m, m->n.nlmsg_len, 0, (struct sockaddr *)&to,
			   sizeof(to));
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

/* The first attribute of @type in [@p, @p + @len), or NULL. */
static const struct nlattr *find_attr(const uint8_t *p, size_t len,
				      uint16_t type)
{
	while (len >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;
		size_t al = a->nla_len;

		if (al < NLA_HDRLEN || al > len)
			return NULL;
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		al = NLA_ALIGN(al);
		if (al >= len)
			break;
		p += al;
		len -= al;
	}
	return NULL;
}

static const uint8_t *attr_data(const struct nlattr *a)
{
	return (const uint8_t *)a + NLA_HDRLEN;
}

static size_t attr_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

/*
 * Receive one datagram; -EAGAIN when none waits (non-blocking), -ENOBUFS
 * counted as dropped records.  Returns its length.
 */
static ssize_t recv_one(struct ctxmon_taskstats_conn *c, int flags)
{
	ssize_t n;

	do
		n = recv(c->fd, c->buf, BUF_SIZE, flags);
	while (n < 0 && errno == EINTR && !(flags & MSG_DONTWAIT));
	if (n < 0) {
		if (errno == ENOBUFS)
			c->dropped++;
		return -errno;
	}
	return n;
}

/* ---- decoding ---------------------------------------------------------- */

/* The payload holds field @f of struct taskstats. */
#define HAS(len, f) \
	((len) >=   \
	 offsetof(struct taskstats, f) + sizeof(((struct taskstats *)0)->f))

int ctxmon_taskstats_decode(const void *payload, size_t len,
			    struct ctxmon_taskstats *out)
{
	struct taskstats t;

	memset(out, 0, sizeof(*out));
	if (!HAS(len, version))
		return -EINVAL;
	memset(&t, 0, sizeof(t));
	memcpy(&t, payload, len < sizeof(t) ? len : sizeof(t));
	out->version = t.version;
	out->size = (uint32_t)len;
	if (HAS(len, ac_exitcode))
		out->exitcode = t.ac_exitcode;
	if (HAS(len, cpu_run_real_total)) {
		out->have |= CTXMON_TS_DELAY;
		out->cpu_count = t.cpu_count;
		out->cpu_delay_ns = t.cpu_delay_total;
		out->cpu_run_ns = t.cpu_run_real_total;
	}
	if (HAS(len, ac_stime)) {
		out->have |= CTXMON_TS_BASIC;
		memcpy(out->comm, t.ac_comm,
		       sizeof(t.ac_comm) < sizeof(out->comm) - 1 ?
			       sizeof(t.ac_comm) :
			       sizeof(out->comm) - 1);
		out->uid = t.ac_uid;
		out->gid = t.ac_gid;
		out->pid = (pid_t)t.ac_pid;
		out->ppid = (pid_t)t.ac_ppid;
		out->start_s = t.ac_btime;
		out->elapsed_us = t.ac_etime;
		out->utime_us = t.ac_utime;
		out->stime_us = t.ac_stime;
	}
	if (HAS(len, nivcsw)) {
		out->have |= CTXMON_TS_CSW;
		out->nvcsw = t.nvcsw;
		out->nivcsw = t.nivcsw;
	}
	if (HAS(len, ac_btime64) && t.ac_btime64)
		out->start_s = t.ac_btime64;
	if (HAS(len, ac_tgid) && t.version >= 12) {
		out->have |= CTXMON_TS_TGID;
		out->tgid = (pid_t)t.ac_tgid;
	}
	return 0;
}

/*
 * A TASKSTATS_TYPE_AGGR_PID (or with @process _AGGR_TGID) nest into @out:
 * the id from the nest, the numbers from its STATS.
 */
static int decode_nest(const struct nlattr *aggr, bool process,
		       struct ctxmon_taskstats *out)
{
	const struct nlattr *id, *st;

	st = find_attr(attr_data(aggr), attr_len(aggr), TASKSTATS_TYPE_STATS);
	id = find_attr(attr_data(aggr), attr_len(aggr),
		       process ? TASKSTATS_TYPE_TGID : TASKSTATS_TYPE_PID);
	if (!st || ctxmon_taskstats_decode(attr_data(st), attr_len(st), out))
		return -EINVAL;
	out->process = process;
	if (id && attr_len(id) >= 4) {
		uint32_t v;

		memcpy(&v, attr_data(id), 4);
		out->pid = (pid_t)v;
		if (process)
			out->tgid = (pid_t)v;
	}
	return 0;
}

/* ---- connection -------------------------------------------------------- */

/* Wait for the answer to request @seq: an NLMSG_ERROR (-errno, or 0 for
 * an ack) or a message of @type whose genl payload goes to @fn. */
static int wait_answer(struct ctxmon_taskstats_conn *c, uint32_t seq,
		       uint16_t type,
		       int (*fn)(const uint8_t *attrs, size_t len, void *ctx),
		       void *ctx)
{
	for (;;) {
		ssize_t n = recv_one(c, 0);
		size_t left;
		const struct nlmsghdr *h;

		if (n < 0) {
			if (n == -ENOBUFS)
				continue; /* exit records overflowed; go on */
			return (int)n;
		}
		left = (size_t)n;
		for (h = (const struct nlmsghdr *)c->buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_seq != seq)
				continue; /* an exit record: not ours */
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EIO;
				return e->error;
			}
			if (fn && h->nlmsg_type == type &&
			    h->nlmsg_len >= NLMSG_LENGTH(GENL_HDRLEN))
				return fn((const uint8_t *)NLMSG_DATA(h) +
						  GENL_HDRLEN,
					  h->nlmsg_len -
						  NLMSG_LENGTH(GENL_HDRLEN),
					  ctx);
		}
	}
}

static int got_family(const uint8_t *attrs, size_t len, void *ctx)
{
	const struct nlattr *a = find_attr(attrs, len, CTRL_ATTR_FAMILY_ID);

	if (!a || attr_len(a) < 2)
		return -EIO;
	memcpy(ctx, attr_data(a), 2);
	return 0;
}

struct ctxmon_taskstats_conn *ctxmon_taskstats_open(void)
{
	struct ctxmon_taskstats_conn *c = calloc(1, sizeof(*c));
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	int rcv = RCVBUF, ret = -ENOMEM;
	struct msg m;

	if (!c)
		goto out;
	c->fd = -1;
	c->buf = malloc(BUF_SIZE);
	if (!c->buf)
		goto out;
	c->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (c->fd < 0 || bind(c->fd, (struct sockaddr *)&me, sizeof(me)) < 0) {
		ret = -errno;
		goto out;
	}
	/* an exit storm can outrun us; a large buffer makes drops rarer */
	setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	init_msg(c, &m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	put_attr(&m, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME,
		 strlen(TASKSTATS_GENL_NAME) + 1);
	ret = send_msg(c, &m);
	if (ret == 0)
		ret = wait_answer(c, m.n.nlmsg_seq, GENL_ID_CTRL, got_family,
				  &c->family);
out:
	if (ret < 0) {
		ctxmon_taskstats_close(c);
		errno = -ret;
		return NULL;
	}
	return c;
}

struct get_ctx {
	struct ctxmon_taskstats *out;
};

static int got_stats(const uint8_t *attrs, size_t len, void *ctx)
{
	struct ctxmon_taskstats *out = ((struct get_ctx *)ctx)->out;
	const struct nlattr *a = find_attr(attrs, len, TASKSTATS_TYPE_AGGR_PID);

	if (a)
		return decode_nest(a, false, out) ? -EIO : 0;
	a = find_attr(attrs, len, TASKSTATS_TYPE_AGGR_TGID);
	return a && !decode_nest(a, true, out) ? 0 : -EIO;
}

int ctxmon_taskstats_get(struct ctxmon_taskstats_conn *c, pid_t pid,
			 bool process, struct ctxmon_taskstats *out)
{
	struct get_ctx g = { out };
	uint32_t id = (uint32_t)pid;
	struct msg m;
	int ret;

	if (!c || pid <= 0 || !out)
		return -EINVAL;
	init_msg(c, &m, c->family, TASKSTATS_CMD_GET, TASKSTATS_VERSION);
	put_attr(&m, process ? TASKSTATS_CMD_ATTR_TGID : TASKSTATS_CMD_ATTR_PID,
		 &id, sizeof(id));
	ret = send_msg(c, &m);
	if (ret < 0)
		return ret;
	return wait_answer(c, m.n.nlmsg_seq, c->family, got_stats, &g);
}

static int register_mask(struct ctxmon_taskstats_conn *c, uint16_t attr,
			 const char *cpulist)
{
	size_t len = strlen(cpulist) + 1;
	struct msg m;
	int ret;

	if (len > 256)
		return -EINVAL;
	init_msg(c, &m, c->family, TASKSTATS_CMD_GET, TASKSTATS_VERSION);
	m.n.nlmsg_flags |= NLM_F_ACK;
	put_attr(&m, attr, cpulist, len);
	ret = send_msg(c, &m);
	if (ret < 0)
		return ret;
	return wait_answer(c, m.n.nlmsg_seq, c->family, NULL, NULL);
}

int ctxmon_taskstats_watch(struct ctxmon_taskstats_conn *c, const char *cpulist)
{
	int ret;

	if (!c || !cpulist || !*cpulist)
		return -EINVAL;
	if (c->cpulist)
		return -EALREADY;
	c->cpulist = strdup(cpulist);
	if (!c->cpulist)
		return -ENOMEM;
	ret = register_mask(c, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, cpulist);
	if (ret < 0) {
		free(c->cpulist);
		c->cpulist = NULL;
	}
	return ret;
}

int ctxmon_taskstats_fd(const struct ctxmon_taskstats_conn *c)
{
	return c ? c->fd : -1;
}

uint64_t ctxmon_taskstats_dropped(const struct ctxmon_taskstats_conn *c)
{
	return c ? c->dropped : 0;
}

int ctxmon_taskstats_read(struct ctxmon_taskstats_conn *c, int timeout_ms,
			  ctxmon_taskstats_fn fn, void *ctx)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	int count = 0;

	if (timeout_ms != 0 && poll(&p, 1, timeout_ms) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv_one(c, MSG_DONTWAIT);
		size_t left;
		const struct nlmsghdr *h;

		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return count;
		if (n == -ENOBUFS)
			continue; /* counted; the socket goes on */
		if (n < 0)
			return (int)n;
		left = (size_t)n;
		for (h = (const struct nlmsghdr *)c->buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			struct ctxmon_taskstats ts;
			const uint8_t *a;
			size_t alen;
			int ret;

			if (h->nlmsg_type != c->family ||
			    h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
				continue;
			a = (const uint8_t *)NLMSG_DATA(h) + GENL_HDRLEN;
			alen = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
			/* a task's record, then its process's when it was
			 * the last thread: both may be in one message */
			for (int k = 0; k < 2; k++) {
				const struct nlattr *x =
					find_attr(a, alen,
						  k ? TASKSTATS_TYPE_AGGR_TGID :
						      TASKSTATS_TYPE_AGGR_PID);

				if (!x || decode_nest(x, k == 1, &ts))
					continue;
				ts.exit = true;
				count++;
				ret = fn(&ts, ctx);
				if (ret)
					return ret;
			}
		}
	}
}

void ctxmon_taskstats_close(struct ctxmon_taskstats_conn *c)
{
	if (!c)
		return;
	if (c->cpulist && c->fd >= 0)
		register_mask(c, TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK,
			      c->cpulist);
	if (c->fd >= 0)
		close(c->fd);
	free(c->cpulist);
	free(c->buf);
	free(c);
}
