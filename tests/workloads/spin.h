/*
 * spin.h - burning a thread's own CPU time, for the test workloads.
 *
 * The clock is read through the vDSO, so the loop makes no system call
 * and every switch it sees is the scheduler's doing.
 */
#ifndef CTXMON_WL_SPIN_H
#define CTXMON_WL_SPIN_H

#include <stdint.h>
#include <time.h>

/* The calling thread's CPU time in ns. */
static inline uint64_t thread_cputime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Burn @ms milliseconds of the calling thread's own CPU time. */
static inline void spin_cpu_ms(uint64_t ms)
{
	volatile uint64_t sink = 0;
	uint64_t end = thread_cputime_ns() + ms * 1000000ull;

	while (thread_cputime_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i;
}

#endif
