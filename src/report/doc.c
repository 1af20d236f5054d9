/* Building the format-neutral report document, and its Markdown and terminal renderings. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf */
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report/doc.h"

static struct rblock *doc_add(struct rdoc *d, int kind)
{
	if (d->n == d->cap) {
		int cap = d->cap ? 2 * d->cap : 32;
		struct rblock *b = realloc(d->b, (size_t)cap * sizeof(*b));

		if (!b) {
			d->err = -ENOMEM;
			return NULL;
		}
		d->b = b;
		d->cap = cap;
	}
	memset(&d->b[d->n], 0, sizeof(d->b[0]));
	d->b[d->n].kind = kind;
	return &d->b[d->n++];
}

void doc_text(struct rdoc *d, int kind, const char *fmt, ...)
{
	struct rblock *b = doc_add(d, kind);
	va_list ap;

	if (!b)
		return;
	va_start(ap, fmt);
	if (vasprintf(&b->text, fmt, ap) < 0) {
		b->text = NULL;
		d->err = -ENOMEM;
	}
	va_end(ap);
}

void doc_chart(struct rdoc *d, int chart, const char *arg)
{
	struct rblock *b = doc_add(d, RB_CHART);

	if (b) {
		b->chart = chart;
		snprintf(b->chart_arg, sizeof(b->chart_arg), "%s", arg ? arg : "");
	}
}

struct rtable *doc_table(struct rdoc *d, int ncols)
{
	struct rblock *b = doc_add(d, RB_TABLE);
	struct rtable *t;

	if (!b)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t) {
		d->err = -ENOMEM;
		return NULL;
	}
	t->ncols = ncols;
	b->t = t;
	if (tbl_row(d, t) < 0)
		return NULL;
	return t;
}

int tbl_row(struct rdoc *d, struct rtable *t)
{
	if (!t)
		return -1;
	if (t->nrows == t->cap) {
		int cap = t->cap ? 2 * t->cap : 16;
		char **c = realloc(t->cell, (size_t)cap * (size_t)t->ncols * sizeof(*c));

		if (!c) {
			d->err = -ENOMEM;
			return -1;
		}
		t->cell = c;
		t->cap = cap;
	}
	memset(&t->cell[t->nrows * t->ncols], 0, (size_t)t->ncols * sizeof(char *));
	return t->nrows++;
}

void tbl_set(struct rdoc *d, struct rtable *t, int row, int col, const char *fmt, ...)
{
	char **c;
	va_list ap;

	if (!t || row < 0 || row >= t->nrows || col < 0 || col >= t->ncols)
		return;
	c = &t->cell[row * t->ncols + col];
	free(*c);
	va_start(ap, fmt);
	if (vasprintf(c, fmt, ap) < 0) {
		*c = NULL;
		d->err = -ENOMEM;
	}
	va_end(ap);
}

void doc_free(struct rdoc *d)
{
	int i, j;

	for (i = 0; i < d->n; i++) {
		struct rtable *t = d->b[i].t;

		free(d->b[i].text);
		if (!t)
			continue;
		for (j = 0; j < t->nrows * t->ncols; j++)
			free(t->cell[j]);
		free(t->cell);
		free(t);
	}
	free(d->b);
	memset(d, 0, sizeof(*d));
}

/* A cell is right-aligned when it starts like a number ("12.3", "-", "+4%", "1.2x"). */
bool doc_cell_numeric(const char *s)
{
	char *end;

	if (strcmp(s, "-") == 0)
		return true;
	strtod(s, &end);
	return end != s && (!*end || *end == '%' || *end == 'x' || strncmp(end, " (", 2) == 0);
}

static bool col_numeric(const struct rtable *t, int col)
{
	int r, any = 0;

	for (r = 1; r < t->nrows; r++) {
		const char *c = tbl_cell(t, r, col);

		if (!*c)
			continue;
		if (!doc_cell_numeric(c))
			return false;
		any = 1;
	}
	return any;
}

static void md_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
}

static void md_table(FILE *f, const struct rtable *t)
{
	int r, c;

	for (r = 0; r < t->nrows; r++) {
		fputc('|', f);
		for (c = 0; c < t->ncols; c++) {
			fputc(' ', f);
			md_cell(f, tbl_cell(t, r, c));
			fputs(" |", f);
		}
		fputc('\n', f);
		if (r)
			continue;
		fputc('|', f);
		for (c = 0; c < t->ncols; c++)
			fputs(col_numeric(t, c) ? " ---: |" : " --- |", f);
		fputc('\n', f);
	}
}

void doc_render_md(FILE *f, const struct rdoc *d)
{
	int i, prev = -1;

	for (i = 0; i < d->n; i++) {
		const struct rblock *b = &d->b[i];

		if (b->kind == RB_CHART)
			continue;
		if (prev >= 0 && !(prev == RB_ITEM && b->kind == RB_ITEM))
			fputc('\n', f);
		switch (b->kind) {
		case RB_H1:
			fprintf(f, "# %s\n", b->text);
			break;
		case RB_H2:
			fprintf(f, "## %s\n", b->text);
			break;
		case RB_H3:
			fprintf(f, "### %s\n", b->text);
			break;
		case RB_PARA:
			fprintf(f, "%s\n", b->text);
			break;
		case RB_ITEM:
			fprintf(f, "- %s\n", b->text);
			break;
		case RB_TABLE:
			md_table(f, b->t);
			break;
		}
		prev = b->kind;
	}
}

/* Display width in columns: UTF-8 continuation bytes take none. */
static int text_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Terminal bounds: a cell wraps past TEXT_CELL columns, a table wider than TEXT_LINE
 * is split into panels that repeat its first column, paragraphs wrap at TEXT_PARA. */
#define TEXT_CELL 40
#define TEXT_LINE 160
#define TEXT_PARA 100

/*
 * Next line of *p at most `width` columns wide, broken after a ',' or ' ' when one
 * lies in the second half of the line; copied into out (NUL-terminated), *p advanced.
 */
static void wrap_next(const char **p, int width, char *out, size_t len)
{
	const char *s = *p, *cut = NULL, *q = s;
	int w = 0;

	while (*q && w < width) {
		q++;
		while ((*q & 0xc0) == 0x80)
			q++;
		w++;
		if ((q[-1] == ',' || q[-1] == ' ') && w > width / 2)
			cut = q;
	}
	if (!*q || !cut)
		cut = q;
	q = cut;
	while (q > s && q[-1] == ' ')
		q--;
	snprintf(out, len, "%.*s", (int)(q - s), s);
	while (*cut == ' ')
		cut++;
	*p = cut;
}

static int wrapped_lines(const char *s, int width)
{
	char buf[4 * TEXT_CELL + 4];
	int n = 0;

	do {
		wrap_next(&s, width, buf, sizeof(buf));
		n++;
	} while (*s);
	return n;
}

/* One table row (header or data) over the columns of a panel: col 0, then [c0, c1). */
static void text_row(FILE *f, const struct rtable *t, int r, const int *w, const bool *num,
		     int c0, int c1)
{
	const char *pos[TEXT_LINE / 3 + 2];
	char buf[4 * TEXT_CELL + 4];
	int lines = 1, l, c, k;

	for (k = 0, c = 0; c < c1; c = c ? c + 1 : c0, k++) {
		pos[k] = tbl_cell(t, r, c);
		lines = GS_MAX(lines, wrapped_lines(pos[k], w[c]));
		if (!c && c0 == 0)
			break;
	}
	for (l = 0; l < lines; l++) {
		for (k = 0, c = 0; c < c1; c = c ? c + 1 : c0, k++) {
			int pad;

			if (*pos[k])
				wrap_next(&pos[k], w[c], buf, sizeof(buf));
			else
				buf[0] = '\0';
			pad = w[c] - text_width(buf);
			fputs("  ", f);
			if (num[c] && r)
				fprintf(f, "%*s%s", pad, "", buf);
			else if (c + 1 < c1)
				fprintf(f, "%s%*s", buf, pad, "");
			else
				fputs(buf, f);
			if (!c && c0 == 0)
				break;
		}
		fputc('\n', f);
	}
}

static void text_table(FILE *f, const struct rtable *t)
{
	int *w = calloc((size_t)t->ncols, sizeof(*w));
	bool *num = calloc((size_t)t->ncols, sizeof(*num));
	int r, c, c0, c1, total;

	if (!w || !num)
		goto out_free;
	for (c = 0; c < t->ncols; c++) {
		num[c] = col_numeric(t, c);
		for (r = 0; r < t->nrows; r++)
			w[c] = GS_MAX(w[c], text_width(tbl_cell(t, r, c)));
		w[c] = GS_MIN(w[c], TEXT_CELL);
	}
	if (t->ncols == 1) {
		for (r = 0; r < t->nrows; r++)
			text_row(f, t, r, w, num, 0, 1);
		goto out_free;
	}
	/* Panels: column 0 then as many further columns as fit in TEXT_LINE. */
	for (c0 = 1; c0 < t->ncols; c0 = c1) {
		total = w[0] + 2;
		for (c1 = c0; c1 < t->ncols && (c1 == c0 || total + w[c1] + 2 <= TEXT_LINE) &&
			      c1 - c0 < TEXT_LINE / 3; c1++)
			total += w[c1] + 2;
		if (c0 > 1)
			fputc('\n', f);
		for (r = 0; r < t->nrows; r++) {
			text_row(f, t, r, w, num, c0, c1);
			if (r == 0) {
				fputs("  ", f);
				for (c = 0; c < total - 2; c++)
					fputc('-', f);
				fputc('\n', f);
			}
		}
	}
out_free:
	free(num);
	free(w);
}

/* Text wrapped at TEXT_PARA columns, continuation lines indented by `indent`. */
static void text_para(FILE *f, const char *prefix, const char *s, int indent)
{
	char buf[4 * TEXT_PARA + 4];

	fputs(prefix, f);
	do {
		wrap_next(&s, TEXT_PARA, buf, sizeof(buf));
		fprintf(f, "%s\n", buf);
		if (*s)
			fprintf(f, "%*s", indent, "");
	} while (*s);
}

void doc_render_text(FILE *f, const struct rdoc *d)
{
	int i;

	for (i = 0; i < d->n; i++) {
		const struct rblock *b = &d->b[i];

		switch (b->kind) {
		case RB_H1:
			fprintf(f, "%s\n", b->text);
			break;
		case RB_H2:
		case RB_H3:
			fprintf(f, "\n%s\n", b->text);
			break;
		case RB_PARA:
			text_para(f, "", b->text, 0);
			break;
		case RB_ITEM:
			text_para(f, "  * ", b->text, 4);
			break;
		case RB_TABLE:
			text_table(f, b->t);
			break;
		}
	}
}

void html_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
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
			fputc(*s, f);
		}
	}
}
