/*
 * svg.c - a small SVG writer (axes with ticks and labels, points, lines,
 * boxes) and the experiment's plots drawn with it: the scatter of a
 * regression with its fitted line, and one strip-and-box plot per metric
 * with the conditions side by side.  The output needs no script, font
 * file or stylesheet from elsewhere: an SVG document, or an HTML page with
 * the SVGs inline.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/exp_output.h"
#include "output/json_out.h"

static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c",
				       "#ff7f0e", "#9467bd", "#8c564b" };
#define NPAL (sizeof(palette) / sizeof(*palette))

/* Plot cells: each plot is drawn in a CELL_W x CELL_H cell. */
#define CELL_W 460.0
#define CELL_H 330.0
#define COLS 2

void svg__escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n;

	for (; *p; p++) {
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			if (*p < 0x20) {
				fputc('?', f);
			} else if (*p < 0x80) {
				fputc(*p, f);
			} else if ((n = utf8__seq(p))) {
				fwrite(p, 1, n, f);
				p += n - 1;
			} else {
				/* XML must be well-formed UTF-8: a comm is
				 * bytes, so U+FFFD stands for a stray one */
				fputs("\xef\xbf\xbd", f);
			}
		}
	}
}

void svg__begin(FILE *f, double w, double h)
{
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		   "font-family=\"sans-serif\">\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		w, h, w, h);
}

void svg__end(FILE *f)
{
	fputs("</svg>\n", f);
}

void svg__text(FILE *f, double x, double y, const char *anchor, double rot,
	       int size, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" "
		   "text-anchor=\"%s\"", x, y, size, anchor);
	if (rot != 0)
		fprintf(f, " transform=\"rotate(%.0f %.1f %.1f)\"", rot, x, y);
	fputc('>', f);
	svg__escape(f, buf);
	fputs("</text>\n", f);
}

static double px(const struct svg_plot *p, double x)
{
	return p->x + (x - p->x0) / (p->x1 - p->x0) * p->w;
}

static double py(const struct svg_plot *p, double y)
{
	return p->y + p->h - (y - p->y0) / (p->y1 - p->y0) * p->h;
}

void svg__nice_range(double *lo, double *hi, double *step)
{
	/* counts and times are never negative: neither is their axis */
	bool nonneg = *lo >= 0;
	double span, mag, f;

	if (!(*hi > *lo)) {
		double d = *lo ? fabs(*lo) * 0.1 : 1.0;

		*lo -= d;
		*hi += d;
	}
	/* a margin, so that no point sits on the frame; a range that
	 * starts at 0 (counts) keeps its 0 */
	span = *hi - *lo;
	if (*lo != 0)
		*lo -= span * 0.04;
	*hi += span * 0.04;
	if (nonneg && *lo < 0)
		*lo = 0;
	span = *hi - *lo;
	mag = pow(10, floor(log10(span / 5)));
	f = span / 5 / mag;
	*step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
	*lo = floor(*lo / *step) * *step;
	*hi = ceil(*hi / *step) * *step;
}

/* A tick label without float noise ("0.30000000000000004"). */
static void tick_label(char *buf, size_t len, double v, double step)
{
	int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);

	if (fabs(v) < step * 1e-6)
		v = 0;
	if (fabs(v) >= 1e6 || (fabs(v) > 0 && fabs(v) < 1e-4))
		snprintf(buf, len, "%.3g", v);
	else
		snprintf(buf, len, "%.*f", dec > 10 ? 10 : dec, v);
}

void svg__axes(struct svg_plot *p, const char *xlabel, const char *ylabel,
	       const char *const *xcat, size_t ncat)
{
	FILE *f = p->f;
	double lo = p->y0, hi = p->y1, step;
	char buf[64];

	svg__nice_range(&lo, &hi, &step);
	p->y0 = lo;
	p->y1 = hi;
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		   "fill=\"none\" stroke=\"#444\"/>\n", p->x, p->y, p->w, p->h);
	for (double v = lo; v <= hi + step * 1e-9; v += step) {
		double y = py(p, v);

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			   "stroke=\"#ddd\"/>\n", p->x, y, p->x + p->w, y);
		tick_label(buf, sizeof(buf), v, step);
		svg__text(f, p->x - 5, y + 4, "end", 0, 11, "%s", buf);
	}
	if (xcat) {
		for (size_t i = 0; i < ncat; i++)
			svg__text(f, px(p, (double)i + 1), p->y + p->h + 16,
				  "middle", 0, 12, "%s", xcat[i]);
	} else {
		lo = p->x0;
		hi = p->x1;
		svg__nice_range(&lo, &hi, &step);
		p->x0 = lo;
		p->x1 = hi;
		for (double v = lo; v <= hi + step * 1e-9; v += step) {
			double x = px(p, v);

			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				   "y2=\"%.1f\" stroke=\"#ddd\"/>\n",
				x, p->y, x, p->y + p->h);
			tick_label(buf, sizeof(buf), v, step);
			svg__text(f, x, p->y + p->h + 15, "middle", 0, 11, "%s",
				  buf);
		}
	}
	svg__text(f, p->x + p->w / 2, p->y + p->h + 36, "middle", 0, 13, "%s",
		  xlabel);
	svg__text(f, p->x - 58, p->y + p->h / 2, "middle", -90, 13, "%s",
		  ylabel);
}

void svg__point(struct svg_plot *p, double x, double y, const char *color,
		bool hollow)
{
	fprintf(p->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" "
		      "fill-opacity=\"0.7\" stroke=\"%s\"/>\n",
		px(p, x), py(p, y), hollow ? "none" : color, color);
}

void svg__line(struct svg_plot *p, double xa, double ya, double xb,
	       double yb, const char *color, double width, bool dashed)
{
	fprintf(p->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		      "stroke=\"%s\" stroke-width=\"%.1f\"%s/>\n",
		px(p, xa), py(p, ya), px(p, xb), py(p, yb), color, width,
		dashed ? " stroke-dasharray=\"5,3\"" : "");
}

void svg__rect(struct svg_plot *p, double xa, double ya, double xb,
	       double yb, const char *color)
{
	double x = fmin(px(p, xa), px(p, xb)), y = fmin(py(p, ya), py(p, yb));

	fprintf(p->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		      "height=\"%.1f\" fill=\"%s\" fill-opacity=\"0.12\" "
		      "stroke=\"%s\" stroke-width=\"1.5\"/>\n",
		x, y, fabs(px(p, xb) - px(p, xa)), fabs(py(p, yb) - py(p, ya)),
		color, color);
}

/* ---- the experiment's plots ---------------------------------------- */

static void axis_label(char *buf, size_t len, unsigned m)
{
	const char *u = ctxmon_metric_unit(m);

	snprintf(buf, len, "%s%s%s%s", ctxmon_metric_label(m), *u ? " (" : "",
		 u, *u ? ")" : "");
}

/* The plot area of cell @i. */
static struct svg_plot cell(FILE *f, size_t i)
{
	struct svg_plot p = {
		.f = f,
		.x = (double)(i % COLS) * CELL_W + 80,
		.y = (double)(i / COLS) * CELL_H + 40,
		.w = CELL_W - 100,
		.h = CELL_H - 95,
	};
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Quantile @q of sorted @s[@n], linear between order statistics. */
static double quantile(const double *s, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t i = (size_t)floor(h);

	if (i + 1 >= n)
		return s[n - 1];
	return s[i] + (h - (double)i) * (s[i + 1] - s[i]);
}

/* Strip and box plot of metric @m, conditions side by side. */
static int plot_metric(FILE *f, const struct exp_report *r, unsigned m,
		       size_t at)
{
	size_t nc = ctxmon_experiment_nconds(r->e);
	struct svg_plot p = cell(f, at);
	const char *names[16];
	double lo = INFINITY, hi = -INFINITY;
	char label[96];

	if (nc > 16)
		nc = 16;
	for (size_t c = 0; c < nc; c++) {
		struct ctxmon_metric_summary s;

		names[c] = ctxmon_experiment_cond_name(r->e, c);
		if (ctxmon_experiment_summary(r->e, c, m, &s) < 0)
			continue;
		lo = fmin(lo, s.all.min);
		hi = fmax(hi, s.all.max);
	}
	if (!isfinite(lo))
		return 0;
	fprintf(f, "<g class=\"metric\" id=\"metric-%s\">\n",
		ctxmon_metric_name(m));
	p.x0 = 0.4;
	p.x1 = (double)nc + 0.6;
	p.y0 = lo;
	p.y1 = hi;
	axis_label(label, sizeof(label), m);
	svg__text(f, p.x + p.w / 2, p.y - 14, "middle", 0, 14, "%s", label);
	svg__axes(&p, "condition", label, names, nc);
	for (size_t c = 0; c < nc; c++) {
		const char *col = palette[c % NPAL];
		struct ctxmon_metric_summary s;
		size_t n, wlo, whi, *idx = NULL;
		double *v = ctxmon_experiment_values(r->e, c, m, &n, &idx);
		double x = (double)c + 1, q1, q3, med;

		if (!v)
			continue;
		ctxmon_experiment_summary(r->e, c, m, &s);
		for (size_t i = 0; i < n; i++) {
			/* a fixed spread by run order keeps points apart */
			double jit = ((double)(i % 9) - 4) / 4 * 0.12;
			bool out = s.all.mad > 0 && (v[i] < s.all.lo_fence ||
						     v[i] > s.all.hi_fence);

			svg__point(&p, x - 0.22 + jit, v[i], col, out);
		}
		qsort(v, n, sizeof(*v), cmp_double);
		q1 = quantile(v, n, 0.25);
		q3 = quantile(v, n, 0.75);
		med = quantile(v, n, 0.5);
		/* whiskers reach the most extreme values that are not
		 * outliers (those are drawn hollow on their own) */
		wlo = 0;
		whi = n - 1;
		while (s.all.mad > 0 && wlo < whi && v[wlo] < s.all.lo_fence)
			wlo++;
		while (s.all.mad > 0 && whi > wlo && v[whi] > s.all.hi_fence)
			whi--;
		svg__rect(&p, x + 0.08, q1, x + 0.38, q3, col);
		svg__line(&p, x + 0.08, med, x + 0.38, med, col, 2.5, false);
		svg__line(&p, x + 0.23, fmin(v[wlo], q1), x + 0.23, q1, col, 1,
			  false);
		svg__line(&p, x + 0.23, q3, x + 0.23, fmax(v[whi], q3), col, 1,
			  false);
		svg__line(&p, x + 0.05, s.all.mean, x + 0.41, s.all.mean, "#000",
			  1, true);
		free(v);
		free(idx);
	}
	svg__text(f, p.x + p.w, p.y + p.h + 52, "end", 0, 10,
		  "box: quartiles, median; dashed: mean; hollow: outliers");
	fputs("</g>\n", f);
	return 1;
}

/* Scatter of the regression with its line, points coloured by condition. */
static int plot_regress(FILE *f, const struct exp_report *r, size_t at)
{
	size_t nc = ctxmon_experiment_nconds(r->e), nruns;
	const struct ctxmon_run *runs = ctxmon_experiment_runs(r->e, &nruns);
	struct svg_plot p = cell(f, at);
	struct ctxmon_linreg l;
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	char xl[96], yl[96];
	bool have = ctxmon_experiment_regress(r->e, (size_t)-1, r->ry, r->rx,
					      &l) == 0;

	for (size_t i = 0; i < nruns; i++) {
		const struct ctxmon_run *u = &runs[i];

		if (u->status != CTXMON_RUN_OK || !isfinite(u->v[r->rx]) ||
		    !isfinite(u->v[r->ry]))
			continue;
		xlo = fmin(xlo, u->v[r->rx]);
		xhi = fmax(xhi, u->v[r->rx]);
		ylo = fmin(ylo, u->v[r->ry]);
		yhi = fmax(yhi, u->v[r->ry]);
	}
	if (!isfinite(xlo))
		return 0;
	fputs("<g class=\"regression\" id=\"regression\">\n", f);
	if (have) {
		ylo = fmin(ylo, fmin(l.intercept + l.slope * xlo,
				     l.intercept + l.slope * xhi));
		yhi = fmax(yhi, fmax(l.intercept + l.slope * xlo,
				     l.intercept + l.slope * xhi));
	}
	p.x0 = xlo;
	p.x1 = xhi;
	p.y0 = ylo;
	p.y1 = yhi;
	axis_label(xl, sizeof(xl), r->rx);
	axis_label(yl, sizeof(yl), r->ry);
	if (have)
		svg__text(f, p.x + p.w / 2, p.y - 14, "middle", 0, 13,
			  "%s = %.4g %c %.4g x %s, r\xc2\xb2 = %.3f, p = %.2g",
			  ctxmon_metric_name(r->ry), l.intercept,
			  l.slope < 0 ? '-' : '+', fabs(l.slope),
			  ctxmon_metric_name(r->rx), l.r2, l.p);
	svg__axes(&p, xl, yl, NULL, 0);
	for (size_t i = 0; i < nruns; i++) {
		const struct ctxmon_run *u = &runs[i];

		if (u->status != CTXMON_RUN_OK || !isfinite(u->v[r->rx]) ||
		    !isfinite(u->v[r->ry]))
			continue;
		svg__point(&p, u->v[r->rx], u->v[r->ry],
			   palette[u->cond % NPAL], false);
	}
	if (have) {
		fputs("<g class=\"fit\">\n", f);
		svg__line(&p, p.x0, l.intercept + l.slope * p.x0, p.x1,
			  l.intercept + l.slope * p.x1, "#000", 2, false);
		fputs("</g>\n", f);
	}
	for (size_t c = 0; c < nc && nc > 1; c++) {
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n",
			p.x + 10 + (double)c * 90, p.y + p.h + 50,
			palette[c % NPAL]);
		svg__text(f, p.x + 18 + (double)c * 90, p.y + p.h + 54, "start",
			  0, 11, "%s", ctxmon_experiment_cond_name(r->e, c));
	}
	fputs("</g>\n", f);
	return 1;
}

int output__experiment_plot(FILE *f, const struct exp_report *r, bool html)
{
	unsigned list[CTXMON_M__MAX];
	size_t nplots = 0, at = 0, rows;

	for (unsigned m = 0; m < CTXMON_M__MAX; m++) {
		struct ctxmon_metric_summary s;
		bool any = false;

		for (size_t c = 0; c < ctxmon_experiment_nconds(r->e); c++)
			any |= ctxmon_experiment_summary(r->e, c, m, &s) == 0;
		if (r->show[m] && any)
			list[nplots++] = m;
	}
	if (html) {
		fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
		      "<title>ctxmon experiment</title>\n<style>body{font-family:"
		      "sans-serif;margin:16px}svg{margin:4px;border:1px solid "
		      "#eee}</style></head><body>\n<h1>ctxmon experiment</h1>\n"
		      "<ul>\n", f);
		for (size_t c = 0; c < ctxmon_experiment_nconds(r->e); c++) {
			fputs("<li><b>", f);
			svg__escape(f, ctxmon_experiment_cond_name(r->e, c));
			fputs("</b>: <code>", f);
			svg__escape(f, r->cond_cmd[c]);
			fputs("</code></li>\n", f);
		}
		fputs("</ul>\n", f);
		if (r->regress) {
			svg__begin(f, CELL_W, CELL_H);
			plot_regress(f, r, 0);
			svg__end(f);
		}
		for (size_t i = 0; i < nplots; i++) {
			svg__begin(f, CELL_W, CELL_H);
			plot_metric(f, r, list[i], 0);
			svg__end(f);
		}
		fputs("</body></html>\n", f);
		return ferror(f) ? -EIO : 0;
	}
	rows = (nplots + r->regress + COLS - 1) / COLS;
	svg__begin(f, CELL_W * COLS, CELL_H * (double)(rows ? rows : 1));
	if (r->regress)
		at += (size_t)plot_regress(f, r, at);
	for (size_t i = 0; i < nplots; i++)
		at += (size_t)plot_metric(f, r, list[i], at);
	svg__end(f);
	return ferror(f) ? -EIO : 0;
}
