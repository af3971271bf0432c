/*
 * stats.c - statistics for repeated runs (include/ctxmon/stats.h):
 * Student's t and the normal distribution, summaries with confidence
 * intervals and a robust outlier rule, least squares, Welch's t-test and
 * the Mann-Whitney U test.
 *
 * The t distribution's tail is the regularised incomplete beta function,
 * which is evaluated by its continued fraction (the classic expansion whose
 * even and odd terms are written out below) with the modified Lentz
 * algorithm; the continued fraction converges fast for x below
 * (a+1)/(a+b+2), and the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) covers the
 * rest.  The complement 1-x is passed in separately so that it is never
 * recomputed with a cancellation.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/stats.h>

#define CF_MAX_ITER 1000
#define CF_EPS 1e-16
#define CF_TINY 1e-300

/*
 * Continued fraction of I_x(a,b) without its front factor:
 * 1/(1+ d1/(1+ d2/(1+ ...))) with
 *   d(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1))
 *   d(2m)   =  m(b-m) x / ((a+2m-1)(a+2m))
 * evaluated by the modified Lentz method.
 */
static double beta_cf(double a, double b, double x)
{
	double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0), f, num;

	if (fabs(d) < CF_TINY)
		d = CF_TINY;
	d = 1.0 / d;
	f = d;
	for (int m = 1; m <= CF_MAX_ITER; m++) {
		double delta;

		/* even step d(2m) */
		num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
		d = 1.0 + num * d;
		c = 1.0 + num / c;
		if (fabs(d) < CF_TINY)
			d = CF_TINY;
		if (fabs(c) < CF_TINY)
			c = CF_TINY;
		d = 1.0 / d;
		f *= d * c;
		/* odd step d(2m+1) */
		num = -(a + m) * (a + b + m) * x /
		      ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
		d = 1.0 + num * d;
		c = 1.0 + num / c;
		if (fabs(d) < CF_TINY)
			d = CF_TINY;
		if (fabs(c) < CF_TINY)
			c = CF_TINY;
		d = 1.0 / d;
		delta = d * c;
		f *= delta;
		if (fabs(delta - 1.0) < CF_EPS)
			break;
	}
	return f;
}

/* I_x(a,b) where @y = 1 - x, given exactly by the caller. */
static double betainc2(double a, double b, double x, double y)
{
	double lfront;

	if (!(a > 0) || !(b > 0) || !(x >= 0) || !(y >= 0) || x > 1 || y > 1)
		return NAN;
	if (x == 0)
		return 0.0;
	if (y == 0)
		return 1.0;
	lfront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) +
		 b * log(y);
	if (x < (a + 1.0) / (a + b + 2.0))
		return exp(lfront) * beta_cf(a, b, x) / a;
	return 1.0 - exp(lfront) * beta_cf(b, a, y) / b;
}

double ctxmon_betainc(double a, double b, double x)
{
	return betainc2(a, b, x, 1.0 - x);
}

double ctxmon_norm_sf(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

double ctxmon_norm_cdf(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

/* P(|T| > |t|) with df degrees of freedom: I_{df/(df+t^2)}(df/2, 1/2). */
static double t_two_tail(double t, double df)
{
	double t2 = t * t;

	if (isinf(t))
		return 0.0;
	return betainc2(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2));
}

double ctxmon_t_sf(double t, double df)
{
	double tail;

	if (isnan(t) || !(df > 0))
		return NAN;
	tail = 0.5 * t_two_tail(t, df);
	return t >= 0 ? tail : 1.0 - tail;
}

double ctxmon_t_cdf(double t, double df)
{
	double tail;

	if (isnan(t) || !(df > 0))
		return NAN;
	tail = 0.5 * t_two_tail(t, df);
	return t >= 0 ? 1.0 - tail : tail;
}

/* By bisection on the upper tail, to the last bit the tail can tell. */
double ctxmon_t_ppf(double p, double df)
{
	double q, lo = 0.0, hi = 1.0;

	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p == 0.5)
		return 0.0;
	q = p > 0.5 ? 1.0 - p : p;	/* wanted upper tail of |t| */
	while (ctxmon_t_sf(hi, df) > q && hi < 1e300)
		hi *= 2.0;
	for (int i = 0; i < 2000; i++) {
		double mid = lo + (hi - lo) / 2.0;

		if (mid <= lo || mid >= hi)
			break;
		if (ctxmon_t_sf(mid, df) > q)
			lo = mid;
		else
			hi = mid;
	}
	/* the bracket is one or two ulps: take the closer end */
	{
		double elo = fabs(ctxmon_t_sf(lo, df) - q);
		double ehi = fabs(ctxmon_t_sf(hi, df) - q);
		double t = elo <= ehi ? lo : hi;

		return p > 0.5 ? t : -t;
	}
}

/* ---- one sample ---------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of sorted @s[@n]. */
static double sorted_median(const double *s, size_t n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
}

double ctxmon_median(const double *x, size_t n)
{
	double *s, m;

	if (!n)
		return NAN;
	s = malloc(n * sizeof(*s));
	if (!s)
		return NAN;
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	m = sorted_median(s, n);
	free(s);
	return m;
}

/* Mean and sample variance by two passes. */
static void mean_var(const double *x, size_t n, double *mean, double *var)
{
	double m = 0, ss = 0;

	for (size_t i = 0; i < n; i++)
		m += x[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - m) * (x[i] - m);
	*mean = m;
	*var = n > 1 ? ss / (double)(n - 1) : 0.0;
}

int ctxmon_summary_compute(const double *x, size_t n,
			   struct ctxmon_summary *out, bool *outliers)
{
	double *s = NULL, var;
	int ret = -EINVAL;

	memset(out, 0, sizeof(*out));
	if (!n)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			goto out;
	ret = -ENOMEM;
	s = malloc(n * sizeof(*s));
	if (!s)
		goto out;
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	out->n = n;
	out->min = s[0];
	out->max = s[n - 1];
	out->median = sorted_median(s, n);
	mean_var(x, n, &out->mean, &var);
	out->sd = sqrt(var);
	if (n >= 2) {
		double half = ctxmon_t_ppf(0.975, (double)(n - 1)) * out->sd /
			      sqrt((double)n);

		out->ci_lo = out->mean - half;
		out->ci_hi = out->mean + half;
	} else {
		out->ci_lo = out->ci_hi = NAN;
	}
	for (size_t i = 0; i < n; i++)
		s[i] = fabs(x[i] - out->median);
	qsort(s, n, sizeof(*s), cmp_double);
	out->mad = sorted_median(s, n) * CTXMON_MAD_SCALE;
	out->lo_fence = out->median - CTXMON_OUTLIER_K * out->mad;
	out->hi_fence = out->median + CTXMON_OUTLIER_K * out->mad;
	for (size_t i = 0; i < n; i++) {
		bool o = out->mad > 0 &&
			 (x[i] < out->lo_fence || x[i] > out->hi_fence);

		out->noutliers += o;
		if (outliers)
			outliers[i] = o;
	}
	ret = 0;
out:
	free(s);
	return ret;
}

/* ---- regression ---------------------------------------------------- */

int ctxmon_linreg_fit(const double *x, const double *y, size_t n,
		      struct ctxmon_linreg *out)
{
	double mx = 0, my = 0, sxx = 0, syy = 0, sxy = 0, r, df, t;

	memset(out, 0, sizeof(*out));
	if (n < 3)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i]))
			return -EINVAL;
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (size_t i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		syy += (y[i] - my) * (y[i] - my);
		sxy += (x[i] - mx) * (y[i] - my);
	}
	if (sxx == 0)
		return -EINVAL;
	r = syy == 0 ? 0.0 : sxy / sqrt(sxx * syy);
	if (r > 1)
		r = 1;
	if (r < -1)
		r = -1;
	df = (double)(n - 2);
	out->n = n;
	out->slope = sxy / sxx;
	out->intercept = my - out->slope * mx;
	out->r = r;
	out->r2 = r * r;
	/* the tiny terms keep a perfect fit finite, as SciPy does */
	t = r * sqrt(df / ((1.0 - r + 1e-20) * (1.0 + r + 1e-20)));
	out->p = 2.0 * ctxmon_t_sf(fabs(t), df);
	out->slope_se = sqrt((1.0 - r * r) * syy / sxx / df);
	out->intercept_se = out->slope_se * sqrt(sxx / (double)n + mx * mx);
	return 0;
}

/* ---- two samples --------------------------------------------------- */

int ctxmon_welch_test(const double *x, size_t nx, const double *y, size_t ny,
		      struct ctxmon_ttest *out)
{
	double mx, my, vx, vy, ex, ey, se2, sp;

	memset(out, 0, sizeof(*out));
	if (nx < 2 || ny < 2)
		return -EINVAL;
	for (size_t i = 0; i < nx; i++)
		if (!isfinite(x[i]))
			return -EINVAL;
	for (size_t i = 0; i < ny; i++)
		if (!isfinite(y[i]))
			return -EINVAL;
	mean_var(x, nx, &mx, &vx);
	mean_var(y, ny, &my, &vy);
	ex = vx / (double)nx;
	ey = vy / (double)ny;
	se2 = ex + ey;
	out->diff = mx - my;
	if (se2 == 0) {
		out->t = out->diff == 0 ? NAN : copysign(INFINITY, out->diff);
		out->df = (double)(nx + ny - 2);
		out->p = out->diff == 0 ? 1.0 : 0.0;
	} else {
		out->t = out->diff / sqrt(se2);
		out->df = se2 * se2 / (ex * ex / (double)(nx - 1) +
				       ey * ey / (double)(ny - 1));
		out->p = 2.0 * ctxmon_t_sf(fabs(out->t), out->df);
		if (out->p > 1)
			out->p = 1;
	}
	sp = sqrt(((double)(nx - 1) * vx + (double)(ny - 1) * vy) /
		  (double)(nx + ny - 2));
	if (sp > 0) {
		out->d = out->diff / sp;
		out->g = out->d * (1.0 - 3.0 / (4.0 * (double)(nx + ny) - 9.0));
	}
	return 0;
}

struct ranked {
	double v;
	bool from_x;
};

static int cmp_ranked(const void *a, const void *b)
{
	return cmp_double(&((const struct ranked *)a)->v,
			  &((const struct ranked *)b)->v);
}

int ctxmon_mannwhitney_test(const double *x, size_t nx, const double *y,
			    size_t ny, struct ctxmon_utest *out)
{
	size_t n = nx + ny;
	struct ranked *r;
	double rx = 0, ties = 0, mu, s, u;

	memset(out, 0, sizeof(*out));
	if (!nx || !ny)
		return -EINVAL;
	r = malloc(n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < nx; i++)
		r[i] = (struct ranked){ x[i], true };
	for (size_t i = 0; i < ny; i++)
		r[nx + i] = (struct ranked){ y[i], false };
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(r[i].v)) {
			free(r);
			return -EINVAL;
		}
	}
	qsort(r, n, sizeof(*r), cmp_ranked);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		double mid, t;

		while (j < n && r[j].v == r[i].v)
			j++;
		/* ranks i+1..j share their mean */
		mid = ((double)(i + 1) + (double)j) / 2.0;
		for (size_t k = i; k < j; k++)
			if (r[k].from_x)
				rx += mid;
		t = (double)(j - i);
		ties += t * t * t - t;
		i = j;
	}
	free(r);
	out->u = rx - (double)nx * ((double)nx + 1.0) / 2.0;
	u = fmax(out->u, (double)nx * (double)ny - out->u);
	mu = (double)nx * (double)ny / 2.0;
	s = sqrt((double)nx * (double)ny / 12.0 *
		 (((double)n + 1.0) - ties / ((double)n * ((double)n - 1.0))));
	if (!(s > 0)) {
		out->z = NAN;
		out->p = 1.0;
		return 0;
	}
	out->z = (u - mu - 0.5) / s;
	out->p = 2.0 * ctxmon_norm_sf(out->z);
	if (out->p > 1)
		out->p = 1;
	return 0;
}
