/*
 * profile_int.h - what the profile's output files share
 * (profile_out.c, profile_svg.c, profile_pprof.c, the CLI's summary).
 */
#ifndef CTXMON_PROFILE_INT_H
#define CTXMON_PROFILE_INT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <ctxmon/profile.h>

/* A thread's totals over its stacks. */
struct profile_thread {
	pid_t tgid, tid;
	const char *comm;
	uint64_t on_us, samples, sleep_us, wait_us;
};

/* Per-thread totals, by tid; free *out. */
int profile__threads(const struct ctxmon_profile *p,
		     struct profile_thread **out, size_t *n);
const char *profile__kind_name(int kind);

#endif
