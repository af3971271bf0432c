/*
 * hist.c - the latency histograms, in one place: the log2 buckets of the
 * rows (ctxmon_stats.lat: bucket i holds [2^i, 2^(i+1)) ns) and their
 * percentile bound, used by stat, top and the exporters; and the fine
 * buckets (32 per power of two) of causes and `ctxmon latency`, with their
 * bounds and interpolated quantiles.
 */
#include <math.h>
#include <stdint.h>

#include "internal.h"
#include <ctxmon/causes.h>
#include <ctxmon/rows.h>

/* ---- log2 histogram --------------------------------------------------- */

unsigned ctxmon_log2_bucket(uint64_t ns)
{
	return log2_bucket(ns);
}

/* ---- fine histogram --------------------------------------------------- */

#define FINE_SUB (1u << CTXMON_FINE_BITS)

unsigned ctxmon_fine_bucket(uint64_t ns)
{
	unsigned e, shift;

	if (ns < 2 * FINE_SUB)
		return (unsigned)ns;
	e = 63 - (unsigned)__builtin_clzll(ns);
	if (e > 39)
		return CTXMON_FINE_BUCKETS - 1;
	shift = e - CTXMON_FINE_BITS;
	return ((e - CTXMON_FINE_BITS) << CTXMON_FINE_BITS) +
	       (unsigned)(ns >> shift);
}

uint64_t ctxmon_fine_lo(unsigned i)
{
	unsigned e, m;

	if (i < 2 * FINE_SUB)
		return i;
	if (i >= CTXMON_FINE_BUCKETS)
		i = CTXMON_FINE_BUCKETS - 1;
	e = (i >> CTXMON_FINE_BITS) + CTXMON_FINE_BITS - 1;
	m = (i & (FINE_SUB - 1)) + FINE_SUB;
	return (uint64_t)m << (e - CTXMON_FINE_BITS);
}

uint64_t ctxmon_fine_hi(unsigned i)
{
	if (i < 2 * FINE_SUB)
		return i;
	if (i >= CTXMON_FINE_BUCKETS - 1)
		return UINT64_MAX;
	return ctxmon_fine_lo(i + 1) - 1;
}

/*
 * Nearest rank: the value of rank ceil(q * n) in sorted order.  The first
 * and last ranks are the exact minimum and maximum.  Otherwise, inside the
 * bucket that holds the rank, its values are taken as evenly spread over
 * the bucket (cut to [min, max]), so rank r of its c samples sits at
 * (r - 1/2) / c of its width.  One method for every histogram ctxmon
 * keeps: the fine one of `latency` and the log2 one of rows (top, stat).
 */
static uint64_t quantile(const uint64_t *cnt, unsigned n,
			 uint64_t (*lo_of)(unsigned), uint64_t (*hi_of)(unsigned),
			 uint64_t min, uint64_t max, double q)
{
	uint64_t total = 0, rank, cum = 0;

	for (unsigned i = 0; i < n; i++)
		total += cnt[i];
	if (!total)
		return 0;
	if (q < 0)
		q = 0;
	rank = (uint64_t)ceil(q * (double)total);
	if (rank < 1)
		rank = 1;
	if (rank >= total)
		return max;
	if (rank == 1 && min)
		return min;
	for (unsigned i = 0; i < n; i++) {
		uint64_t c = cnt[i], lo, hi;

		if (cum + c < rank) {
			cum += c;
			continue;
		}
		lo = lo_of(i);
		hi = hi_of(i);
		if (lo < min)
			lo = min;
		if (hi > max)
			hi = max;
		if (hi < lo)
			return lo;
		return lo + (uint64_t)((double)(hi - lo) *
				       ((double)(rank - cum) - 0.5) / (double)c);
	}
	return max;
}

uint64_t ctxmon_lat_quantile(const struct ctxmon_lat_summary *l, double q)
{
	if (!l || !l->count || !l->fine)
		return 0;
	return quantile(l->fine, CTXMON_FINE_BUCKETS, ctxmon_fine_lo,
			ctxmon_fine_hi, l->min_ns, l->max_ns, q);
}

static uint64_t log2_lo(unsigned i)
{
	return i ? 1ull << i : 0;
}

static uint64_t log2_hi(unsigned i)
{
	return i >= 63 ? UINT64_MAX : (2ull << i) - 1;
}

uint64_t ctxmon_latency_percentile(const struct ctxmon_latency *l,
				   double pct)
{
	if (!l || !l->count)
		return 0;
	/* no minimum is kept with these: rank 1 is interpolated too */
	return quantile(l->hist, CTXMON_HIST_BUCKETS, log2_lo, log2_hi, 0,
			l->max_ns, pct / 100.0);
}
