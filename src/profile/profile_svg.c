/*
 * profile_svg.c - the profile as a self-contained interactive SVG flame
 * graph: the stacks merged into a tree (comm, then frames root first,
 * then the off-CPU cause), each node a rectangle as wide as its time,
 * on-CPU frames in warm colours and frames mostly off CPU in blue.  A
 * small script inside the file zooms into a frame on click (and back on
 * the root) and highlights the frames matching a search (click "Search").
 * No external resources: the file opens as it is in a browser.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/profile.h>

#include "output/exp_output.h"
#include "profile/profile_int.h"

#define FG_W 1200.0
#define FG_ROW 17.0
#define FG_TOP 50.0
#define FG_PAD 10.0

struct fnode {
	const char *name;
	uint64_t on_us, off_us;
	size_t child, next;	/* first child, next sibling (0: none) */
	size_t depth;
};

struct ftree {
	struct fnode *n;
	size_t len, cap, max_depth;
};

static size_t node_new(struct ftree *t, const char *name, size_t depth)
{
	if (t->len == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 1024;
		struct fnode *v = realloc(t->n, nc * sizeof(*v));

		if (!v)
			return 0;
		t->n = v;
		t->cap = nc;
	}
	memset(&t->n[t->len], 0, sizeof(t->n[0]));
	t->n[t->len].name = name;
	t->n[t->len].depth = depth;
	if (depth > t->max_depth)
		t->max_depth = depth;
	return t->len++;
}

/* The child of @parent named @name, made if missing; 0 on ENOMEM. */
static size_t child_of(struct ftree *t, size_t parent, const char *name)
{
	size_t c, last = 0;

	for (c = t->n[parent].child; c; c = t->n[c].next) {
		if (t->n[c].name == name || !strcmp(t->n[c].name, name))
			return c;
		last = c;
	}
	c = node_new(t, name, t->n[parent].depth + 1);
	if (!c)
		return 0;
	if (last)
		t->n[last].next = c;
	else
		t->n[parent].child = c;
	return c;
}

static unsigned name_hash(const char *s)
{
	unsigned h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void draw(FILE *f, const struct ftree *t, size_t i, uint64_t x,
		 uint64_t total, double h)
{
	const struct fnode *nd = &t->n[i];
	uint64_t v = nd->on_us + nd->off_us;
	double px = FG_PAD + (double)x / (double)total * (FG_W - 2 * FG_PAD);
	double pw = (double)v / (double)total * (FG_W - 2 * FG_PAD);
	double y = h - FG_PAD - (double)(nd->depth + 1) * FG_ROW;
	unsigned hh = name_hash(nd->name);
	int r, g, b;

	if (nd->off_us > nd->on_us) {	/* off CPU: blues */
		r = 60 + (int)(hh % 50);
		g = 110 + (int)(hh / 50 % 70);
		b = 200 + (int)(hh / 3500 % 55);
	} else {			/* on CPU: reds to yellows */
		r = 205 + (int)(hh % 50);
		g = 80 + (int)(hh / 50 % 130);
		b = 40 + (int)(hh / 6500 % 30);
	}
	fprintf(f, "<g class=\"fr\" data-x=\"%" PRIu64 "\" data-v=\"%" PRIu64
		   "\" data-d=\"%zu\"><title>",
		x, v, nd->depth);
	svg__escape(f, nd->name);
	fprintf(f, " (%.3f ms, %.2f%%; on CPU %.3f ms, off CPU %.3f ms)</title>"
		   "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
		   "rx=\"2\" fill=\"rgb(%d,%d,%d)\" data-fill=\"rgb(%d,%d,%d)\"/>"
		   "<text x=\"%.2f\" y=\"%.1f\" font-size=\"12\" data-n=\"",
		(double)v / 1e3, 100.0 * (double)v / (double)total,
		(double)nd->on_us / 1e3, (double)nd->off_us / 1e3, px, y, pw,
		FG_ROW - 1, r, g, b, r, g, b, px + 3, y + FG_ROW - 5);
	svg__escape(f, nd->name);
	fputs("\"></text></g>\n", f);
	for (size_t c = nd->child; c; c = t->n[c].next) {
		draw(f, t, c, x, total, h);
		x += t->n[c].on_us + t->n[c].off_us;
	}
}

/* The script: text fitted to the frames, zoom on click, search. */
static const char script[] =
	"<script><![CDATA[\n"
	"var W=%.1f,P=%.1f,T=%" PRIu64 ";\n"
	"var G=[].slice.call(document.querySelectorAll('g.fr'));\n"
	"function fit(g,x,w){var r=g.querySelector('rect'),t=g.querySelector('text');\n"
	" if(w<=0){g.style.display='none';return;}g.style.display='';\n"
	" r.setAttribute('x',x);r.setAttribute('width',w);t.setAttribute('x',x+3);\n"
	" var n=t.getAttribute('data-n'),c=Math.floor((w-6)/7);\n"
	" t.textContent=c<3?'':(n.length<=c?n:n.substring(0,c-2)+'..');}\n"
	"function zoom(x0,v,d){var s=(W-2*P)/v;G.forEach(function(g){\n"
	" var x=+g.dataset.x,gv=+g.dataset.v,gd=+g.dataset.d;\n"
	" if(gd<d){if(x<=x0&&x+gv>=x0+v)fit(g,P,W-2*P);else fit(g,0,0);return;}\n"
	" if(x>=x0&&x+gv<=x0+v)fit(g,P+(x-x0)*s,gv*s);else fit(g,0,0);});}\n"
	"G.forEach(function(g){g.addEventListener('click',function(){\n"
	" zoom(+g.dataset.x,+g.dataset.v,+g.dataset.d);});});\n"
	"function search(){var re=prompt('Search (regular expression)','');\n"
	" if(re===null)return;var m=0,e;try{e=new RegExp(re);}catch(x){return;}\n"
	" G.forEach(function(g){var r=g.querySelector('rect'),n=g.querySelector('text').getAttribute('data-n');\n"
	"  if(re&&e.test(n)){r.setAttribute('fill','rgb(230,0,230)');if(+g.dataset.d==1)m+=+g.dataset.v;}\n"
	"  else r.setAttribute('fill',r.getAttribute('data-fill'));});\n"
	" document.getElementById('matched').textContent=re?'Matched: '+re:'';}\n"
	"document.getElementById('search').addEventListener('click',search);\n"
	"document.getElementById('reset').addEventListener('click',function(){zoom(0,T,0);});\n"
	"zoom(0,T,0);\n"
	"]]></script>\n";

int ctxmon_profile_write_svg(const struct ctxmon_profile *p, FILE *f,
			     const char *title)
{
	const struct ctxmon_profile_stack *v;
	struct ftree t = { 0 };
	size_t n;
	int err;
	double h;

	err = ctxmon_profile_stacks(p, &v, &n);
	if (err)
		return err;
	if (node_new(&t, "all", 0) != 0) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		size_t at = child_of(&t, 0, v[i].comm);
		bool on = v[i].kind == CTXMON_PROF_ON_CPU;

		for (size_t j = 0; at && j <= v[i].n_frames; j++) {
			const char *name = j < v[i].n_frames ? v[i].frames[j] :
							       v[i].cause;
			if (!name)
				break;
			/* charge the path as it is walked */
			if (on)
				t.n[at].on_us += v[i].us;
			else
				t.n[at].off_us += v[i].us;
			at = child_of(&t, at, name);
		}
		if (!at) {
			err = -ENOMEM;
			goto out;
		}
		if (on)
			t.n[at].on_us += v[i].us;
		else
			t.n[at].off_us += v[i].us;
		if (on)
			t.n[0].on_us += v[i].us;
		else
			t.n[0].off_us += v[i].us;
	}
	h = FG_TOP + (double)(t.max_depth + 1) * FG_ROW + 2 * FG_PAD;
	svg__begin(f, FG_W, h);
	fputs("<style>g.fr{cursor:pointer}g.fr:hover rect{stroke:black;"
	      "stroke-width:0.5}text{pointer-events:none}</style>\n", f);
	svg__text(f, FG_W / 2, 22, "middle", 0, 17, "%s", title ? title : "");
	svg__text(f, FG_PAD, 40, "start", 0, 12,
		  "%.3f s in all: on CPU %.3f s (warm), off CPU %.3f s (blue)",
		  (double)(t.n[0].on_us + t.n[0].off_us) / 1e6,
		  (double)t.n[0].on_us / 1e6, (double)t.n[0].off_us / 1e6);
	fprintf(f, "<text id=\"reset\" x=\"%.0f\" y=\"40\" font-size=\"12\" "
		   "style=\"cursor:pointer\">Reset zoom</text>\n"
		   "<text id=\"search\" x=\"%.0f\" y=\"40\" font-size=\"12\" "
		   "text-anchor=\"end\" style=\"cursor:pointer\">Search</text>\n"
		   "<text id=\"matched\" x=\"%.0f\" y=\"22\" font-size=\"12\" "
		   "text-anchor=\"end\"></text>\n",
		FG_W / 2, FG_W - FG_PAD, FG_W - FG_PAD);
	if (t.n[0].on_us + t.n[0].off_us)
		draw(f, &t, 0, 0, t.n[0].on_us + t.n[0].off_us, h);
	fprintf(f, script, FG_W, FG_PAD, t.n[0].on_us + t.n[0].off_us);
	svg__end(f);
	err = ferror(f) ? -EIO : 0;
out:
	free(t.n);
	return err;
}
