/*
 * exp_output.h - writing an experiment (include/ctxmon/experiment.h) and
 * a diff of two captures: text tables, JSON, CSV and SVG/HTML plots.
 */
#ifndef CTXMON_EXP_OUTPUT_H
#define CTXMON_EXP_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include <ctxmon/experiment.h>

#include "output/output.h"

struct exp_report {
	const struct ctxmon_experiment *e;
	const char *const *cond_cmd;	/* each condition's command line */
	const char *backend;
	unsigned n, warmup;		/* runs asked per condition */
	double alpha;			/* significance level of the verdict */
	bool regress;			/* --regress Y~X */
	unsigned ry, rx;
	bool interrupted;		/* stopped by a signal before the end */
	bool show[CTXMON_M__MAX];	/* metrics in the tables and plots */
};

/* The whole experiment as text, JSON or CSV (per-run rows); 0 or -errno. */
int output__experiment(FILE *f, enum out_format fmt,
		       const struct exp_report *r);

/* The plots: an SVG document (@html false) or an HTML page holding one
 * SVG per plot.  0 or -errno. */
int output__experiment_plot(FILE *f, const struct exp_report *r, bool html);

/* ---- SVG writer (svg.c) --------------------------------------------- */

/* A plot area with linear axes; coordinates in data units. */
struct svg_plot {
	FILE *f;
	double x, y, w, h;		/* the plot area in the document */
	double x0, x1, y0, y1;		/* data ranges of the axes */
};

/* Write @s as XML/HTML text or attribute value: & < > " ' escaped, a
 * control character shown as '?', a byte outside well-formed UTF-8 as
 * U+FFFD (XML must be UTF-8); NULL writes nothing.  The one escape of
 * the SVG and HTML outputs (the experiment's plots, the HTML report). */
void svg__escape(FILE *f, const char *s);

/* Open an SVG document of @w x @h pixels (closing tag with _end). */
void svg__begin(FILE *f, double w, double h);
void svg__end(FILE *f);
/* Text at (x, y), anchored "start", "middle" or "end"; @rot degrees. */
void svg__text(FILE *f, double x, double y, const char *anchor, double rot,
	       int size, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
/* Axes with ticks, tick labels, and the two axis labels; @xcat, when not
 * NULL, labels the x axis by category (ncat of them at 1..ncat). */
void svg__axes(struct svg_plot *p, const char *xlabel, const char *ylabel,
	       const char *const *xcat, size_t ncat);
/* A point (circle), hollow when @hollow, of colour @color. */
void svg__point(struct svg_plot *p, double x, double y, const char *color,
		bool hollow);
/* A line between two data points. */
void svg__line(struct svg_plot *p, double xa, double ya, double xb,
	       double yb, const char *color, double width, bool dashed);
/* A data rectangle outline (box of a box plot). */
void svg__rect(struct svg_plot *p, double xa, double ya, double xb,
	       double yb, const char *color);
/* Round the range [lo, hi] out to nice ticks; *step gets the tick step. */
void svg__nice_range(double *lo, double *hi, double *step);

#endif
