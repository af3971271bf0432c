/*
 * hist_synth.c - synthetic event definitions (the syntax of tracefs
 * synthetic_events), a trigger's canonical "trigger info" line as the
 * kernel prints it, and the kernel's rule for "the same trigger" (which
 * :pause, :cont, :clear and "!" apply to).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist_int.h"

bool hist__trig_same(const struct hist_trig *a, const struct hist_trig *b)
{
	if (a->ctl || b->ctl) {
		return a->ctl == b->ctl && a->ctl_event && b->ctl_event &&
		       !strcmp(a->ctl_event, b->ctl_event);
	}
	if (a->nkeys != b->nkeys || a->nvals != b->nvals ||
	    a->nsort != b->nsort)
		return false;
	for (int i = 0; i < a->nkeys; i++)
		if (strcmp(a->keys[i]->text, b->keys[i]->text))
			return false;
	for (int i = 0; i < a->nvals; i++)
		if (strcmp(a->vals[i]->text, b->vals[i]->text))
			return false;
	if (a->nvars != b->nvars)
		return false;
	for (int i = 0; i < a->nvars; i++)
		if (strcmp(a->vars[i].name, b->vars[i].name) ||
		    strcmp(a->vars[i].e->text, b->vars[i].e->text))
			return false;
	for (int i = 0; i < a->nsort; i++)
		if (a->sort[i].idx != b->sort[i].idx ||
		    a->sort[i].desc != b->sort[i].desc)
			return false;
	if (!a->filter_str != !b->filter_str)
		return false;
	if (a->filter_str && strcmp(a->filter_str, b->filter_str))
		return false;
	if (!a->name != !b->name || (a->name && strcmp(a->name, b->name)))
		return false;
	return true;
}

static void print_sort_field(FILE *f, const struct hist_trig *t, int idx)
{
	if (idx == -1)
		fputs("hitcount", f);
	else if (idx >= 100)
		hist__expr_text(f, t->keys[idx - 100]);
	else
		hist__expr_text(f, t->vals[idx]);
}

static void print_action(FILE *f, const struct hist_action *a)
{
	if (a->handler == HA_ONMATCH)
		fprintf(f, ":onmatch(%s.%s).", a->msys, a->mevent);
	else
		fprintf(f, ":%s(%s).", a->handler == HA_ONMAX ? "onmax" :
								"onchange",
			a->track_str);
	if (a->action == HA_SAVE)
		fputs("save(", f);
	else if (a->action == HA_SNAPSHOT)
		fputs("snapshot(", f);
	else if (a->trace_kw)
		fprintf(f, "trace(%s", a->synth_name);
	else
		fprintf(f, "%s(", a->synth_name);
	for (int i = 0; i < a->nparams; i++) {
		if (i || (a->action == HA_TRACE && a->trace_kw))
			fputc(',', f);
		fputs(a->pstr[i], f);
	}
	fputc(')', f);
}

const char *hist__trig_info(struct hist_trig *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (t->ctl) {
		const char *c = strchr(t->ctl_event, ':');

		fprintf(f, "%s_hist:%.*s:%s", t->ctl == 1 ? "enable" :
							     "disable",
			(int)(c - t->ctl_event), t->ctl_event, c + 1);
		if (t->ctl_count < 0)
			fputs(":unlimited", f);
		else
			fprintf(f, ":count=%ld", t->ctl_count);
		if (t->filter_str)
			fprintf(f, " if %s", t->filter_str);
		goto out;
	}
	fputs("hist:", f);
	if (t->name)
		fprintf(f, "%s:", t->name);
	fputs("keys=", f);
	for (int i = 0; i < t->nkeys; i++) {
		if (i)
			fputc(',', f);
		hist__expr_text(f, t->keys[i]);
	}
	fputs(":vals=", f);
	if (!t->nohitcount) {
		fputs("hitcount", f);
		if (hist__mod_name(t->hc_mods))
			fprintf(f, ".%s", hist__mod_name(t->hc_mods));
	}
	for (int i = 0; i < t->nvals; i++) {
		if (i || !t->nohitcount)
			fputc(',', f);
		hist__expr_text(f, t->vals[i]);
	}
	if (t->nvars) {
		fputc(':', f);
		for (int i = 0; i < t->nvars; i++)
			fprintf(f, "%s%s=%s", i ? "," : "", t->vars[i].name,
				t->vars[i].e->text);
	}
	fputs(":sort=", f);
	for (int i = 0; i < t->nsort; i++) {
		if (i)
			fputc(',', f);
		print_sort_field(f, t, t->sort[i].idx);
		if (t->sort[i].desc)
			fputs(".descending", f);
	}
	fprintf(f, ":size=%u", t->size);
	if (t->clock)
		fprintf(f, ":clock=%s", t->clock);
	for (int i = 0; i < t->nacts; i++)
		print_action(f, &t->acts[i]);
	if (t->filter_str)
		fprintf(f, " if %s", t->filter_str);
	fputs(t->paused ? " [paused]" : " [active]", f);
out:
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	free(t->info);
	t->info = buf;
	return buf;
}

/* ---- synthetic events ---------------------------------------------- */

/* "NAME TYPE FIELD; TYPE FIELD; ..." as tracefs synthetic_events takes it
 * ("char name[16]" strings; "s:" prefix of dynamic_events accepted). */
int hist__parse_synth(struct ctxmon_hist *h, const char *def)
{
	char *buf = strdup(def), *s, *name, *rest, *item;
	struct hist_evdef *d = NULL, **nevs;
	bool remove = false;
	int err = -ENOMEM;

	if (!buf)
		goto out;
	for (s = buf; *s; s++)
		if (*s == '\\' && (s[1] == '\n' || s[1] == '\r'))
			*s = ' ';
		else if (isspace((unsigned char)*s))
			*s = ' ';
	s = hist__strip(buf);
	if (*s == '!') {
		remove = true;
		s++;
	}
	if (!strncmp(s, "s:", 2))
		s += 2;
	name = s;
	while (*s && *s != ' ')
		s++;
	if (*s)
		*s++ = '\0';
	rest = s;
	if ((!isalpha((unsigned char)*name) && *name != '_') ||
	    strchr(name, ':') || strchr(name, '/')) {
		hist__set_err(h, "synthetic_events", def, (int)(name - buf),
			      "Illegal name");
		err = -EINVAL;
		goto out;
	}
	for (int i = 0; i < h->nevs; i++) {
		if (!h->evs[i]->synthetic || strcmp(h->evs[i]->name, name))
			continue;
		if (remove) {
			if (h->evs[i]->ntrigs) {
				hist__set_err(h, "synthetic_events", def, -1,
					      "%s is in use", name);
				err = -EBUSY;
				goto out;
			}
			h->evs[i]->defined = false;
			err = 0;
			goto out;
		}
		if (h->evs[i]->defined) {
			hist__set_err(h, "synthetic_events", def,
				      (int)(name - buf),
				      "Synthetic event already exists");
			err = -EEXIST;
			goto out;
		}
		d = h->evs[i];
	}
	if (remove) {
		hist__set_err(h, "synthetic_events", def, (int)(name - buf),
			      "Couldn't find synthetic event");
		err = -ENOENT;
		goto out;
	}
	if (!d) {
		d = calloc(1, sizeof(*d));
		nevs = realloc(h->evs, (h->nevs + 1) * sizeof(*nevs));
		if (!d || !nevs) {
			free(d);
			if (nevs)
				h->evs = nevs;
			goto out;
		}
		h->evs = nevs;
		h->evs[h->nevs++] = d;
		d->system = strdup("synthetic");
		d->name = strdup(name);
		d->type = -1;
		d->synthetic = true;
		if (!d->system || !d->name)
			goto out;
	}
	while ((item = hist__split(&rest, ';')) != NULL) {
		char *f = hist__strip(item), *sp, *br;
		struct hist_field_def *fd;

		if (!*f)
			continue;
		sp = strrchr(f, ' ');
		if (!sp || d->nfields == HIST_MAX_FIELDS) {
			hist__set_err(h, "synthetic_events", def,
				      (int)(f - buf), "Malformed field");
			err = -EINVAL;
			goto fail;
		}
		*sp = '\0';
		fd = realloc(d->fields, (d->nfields + 1) * sizeof(*fd));
		if (!fd)
			goto fail;
		d->fields = fd;
		fd = &d->fields[d->nfields];
		memset(fd, 0, sizeof(*fd));
		br = strchr(sp + 1, '[');
		fd->name = strndup(sp + 1, br ? (size_t)(br - sp - 1) :
						strlen(sp + 1));
		fd->type = strdup(hist__strip(f));
		if (!fd->name || !fd->type) {
			free(fd->name);
			free(fd->type);
			goto fail;
		}
		fd->id = (uint8_t)d->nfields;
		if (!strncmp(fd->type, "char", 4) && br)
			fd->kind = HF_STR;
		else if (br || strstr(fd->type, "[]"))
			fd->kind = HF_U; /* stacks: not recorded */
		else if (fd->type[0] == 's' || !strcmp(fd->type, "int") ||
			 !strcmp(fd->type, "pid_t") ||
			 !strcmp(fd->type, "long") ||
			 !strncmp(fd->type, "short", 5))
			fd->kind = HF_S;
		else
			fd->kind = HF_U;
		d->nfields++;
	}
	if (!d->nfields) {
		hist__set_err(h, "synthetic_events", def, (int)(rest ? rest - buf :
								  0),
			      "No fields");
		err = -EINVAL;
		goto fail;
	}
	d->defined = true;
	err = 0;
	goto out;
fail:
	for (int i = 0; i < d->nfields; i++) {
		free(d->fields[i].name);
		free(d->fields[i].type);
	}
	d->nfields = 0;
	if (err == -ENOMEM)
		hist__set_err(h, "synthetic_events", NULL, -1, "out of memory");
out:
	free(buf);
	return err;
}
