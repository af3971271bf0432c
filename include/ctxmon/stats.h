/*
 * ctxmon/stats.h - the statistics of repeated runs: summaries with a
 * confidence interval, a robust outlier rule, least-squares regression and
 * two-sample tests (Welch's t, Mann-Whitney U) with an effect size.
 *
 * Pure functions on arrays of doubles: nothing is allocated that the
 * caller must free (except where a comment says so), nothing printed.
 * Each function documents the exact variant it computes, so that its
 * numbers can be checked against a reference (SciPy's calls are named).
 * int functions return 0 or a negative errno (-EINVAL for too few values,
 * -ENOMEM); NaN inputs give -EINVAL.
 */
#ifndef CTXMON_STATS_H
#define CTXMON_STATS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- distributions ------------------------------------------------ */

/* Regularised incomplete beta I_x(a, b), a, b > 0, 0 <= x <= 1; NaN when
 * out of range. */
double ctxmon_betainc(double a, double b, double x);
/* Standard normal: P(Z <= z) and P(Z > z) (scipy.stats.norm.cdf/.sf). */
double ctxmon_norm_cdf(double z);
double ctxmon_norm_sf(double z);
/* Student's t with @df > 0 degrees of freedom: P(T > t)
 * (scipy.stats.t.sf), P(T <= t), and the quantile of @p in (0,1)
 * (scipy.stats.t.ppf). */
double ctxmon_t_sf(double t, double df);
double ctxmon_t_cdf(double t, double df);
double ctxmon_t_ppf(double p, double df);

/* ---- one sample ---------------------------------------------------- */

/*
 * The robust outlier rule: a value is an outlier when it lies more than
 * 3 scaled MADs from the median, the scaled MAD being the median absolute
 * deviation times 1/Phi^-1(3/4) = 1.482602218505602 (SciPy's
 * median_abs_deviation(x, scale='normal')).  When the MAD is 0 (more than
 * half the values equal) nothing is flagged.
 */
#define CTXMON_OUTLIER_K 3.0
#define CTXMON_MAD_SCALE 1.482602218505602

struct ctxmon_summary {
	size_t n;
	double mean;
	double sd;		/* sample standard deviation (n - 1); 0 if n < 2 */
	double median;		/* mean of the middle two for even n */
	double min, max;
	double ci_lo, ci_hi;	/* 95% CI of the mean: mean -/+ t(0.975, n-1)
				 * sd/sqrt(n) (scipy.stats.t.interval);
				 * NaN if n < 2 */
	double mad;		/* scaled MAD (see above) */
	double lo_fence, hi_fence; /* values outside are outliers */
	size_t noutliers;
};

/*
 * Summarise @x[@n] (n >= 1) into @out.  With @outliers non-NULL, also
 * flag each value outside the fences (outliers[i] = true).  0 or -EINVAL.
 */
int ctxmon_summary_compute(const double *x, size_t n,
			   struct ctxmon_summary *out, bool *outliers);

/* Median of @x[@n] (n >= 1); @x is not changed.  NaN on failure. */
double ctxmon_median(const double *x, size_t n);

/* ---- regression ---------------------------------------------------- */

/* Least squares y = intercept + slope x, as scipy.stats.linregress. */
struct ctxmon_linreg {
	size_t n;
	double slope, intercept;
	double r, r2;
	double p;		/* two-sided p of slope = 0 (t, n-2 df) */
	double slope_se, intercept_se;
};
/* n >= 3 and x not all equal, else -EINVAL. */
int ctxmon_linreg_fit(const double *x, const double *y, size_t n,
		      struct ctxmon_linreg *out);

/* ---- two samples --------------------------------------------------- */

/*
 * Welch's t-test (scipy.stats.ttest_ind(x, y, equal_var=False)): t of
 * mean(x) - mean(y), Welch-Satterthwaite degrees of freedom, two-sided p.
 * Effect size is Hedges' g: Cohen's d with the pooled sample standard
 * deviation sqrt(((nx-1)sx^2 + (ny-1)sy^2) / (nx+ny-2)), times the small
 * sample correction 1 - 3 / (4(nx+ny) - 9).  Both samples need n >= 2;
 * when both variances are 0, t is +-inf (p 0) or NaN (p 1) as the means
 * differ or not.
 */
struct ctxmon_ttest {
	double diff;		/* mean(x) - mean(y) */
	double t, df, p;
	double d, g;		/* Cohen's d, Hedges' g (0 when sd 0) */
};
int ctxmon_welch_test(const double *x, size_t nx, const double *y, size_t ny,
		      struct ctxmon_ttest *out);

/*
 * Mann-Whitney U, two-sided, normal approximation with the tie correction
 * of the variance and a continuity correction: SciPy's
 * mannwhitneyu(x, y, alternative='two-sided', method='asymptotic',
 * use_continuity=True).  u is U of x (sum of x's mid-ranks less
 * nx(nx+1)/2); z = (max(U, nx ny - U) - nx ny/2 - 0.5) / s with
 * s^2 = nx ny/12 ((n+1) - sum(t^3 - t)/(n(n-1))); p = 2 P(Z > z), at most
 * 1.  All values tied: p = 1.  nx, ny >= 1.  0, -EINVAL or -ENOMEM.
 */
struct ctxmon_utest {
	double u, z, p;
};
int ctxmon_mannwhitney_test(const double *x, size_t nx, const double *y,
			    size_t ny, struct ctxmon_utest *out);

#ifdef __cplusplus
}
#endif
#endif
