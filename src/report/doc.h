/*
 * The report as a format-neutral document: headings, paragraphs, list items,
 * tables and chart placeholders. Sections build it once; md, terminal and HTML
 * renderers walk it, so every format says the same thing.
 */
#ifndef GS_REPORT_DOC_H
#define GS_REPORT_DOC_H

#include <stdio.h>

#include "util/common.h"

enum rblock_kind {
	RB_H1 = 0,
	RB_H2,
	RB_H3,
	RB_PARA,
	RB_ITEM,
	RB_TABLE,
	RB_CHART,  /* HTML only: chart number `chart`, drawn by the HTML writer */
};

/* Cells row-major, row 0 is the header; a NULL cell renders empty. */
struct rtable {
	int ncols;
	int nrows;
	int cap;
	char **cell;
};

struct rblock {
	int kind;           /* enum rblock_kind */
	char *text;
	struct rtable *t;
	int chart;
	char chart_arg[192];
};

struct rdoc {
	struct rblock *b;
	int n;
	int cap;
	int err;            /* first allocation failure; builders check it once at the end */
};

void doc_free(struct rdoc *d);
void doc_text(struct rdoc *d, int kind, const char *fmt, ...) GS_PRINTF(3, 4);
void doc_chart(struct rdoc *d, int chart, const char *arg);
/* A table with ncols columns; header cells are set with tbl_set(t, 0, col, ...). */
struct rtable *doc_table(struct rdoc *d, int ncols);
/* Append a row, returning its index (-1 on allocation failure, also noted in d->err). */
int tbl_row(struct rdoc *d, struct rtable *t);
void tbl_set(struct rdoc *d, struct rtable *t, int row, int col, const char *fmt, ...)
	GS_PRINTF(5, 6);
static inline const char *tbl_cell(const struct rtable *t, int row, int col)
{
	const char *c = t->cell[row * t->ncols + col];
	return c ? c : "";
}

/* A cell reads as a number ("12.3", "45%", "1.2x", "3.4 (56%)", "-"): right-aligned. */
bool doc_cell_numeric(const char *s);

void doc_render_md(FILE *f, const struct rdoc *d);
void doc_render_text(FILE *f, const struct rdoc *d);
/* Escape &, <, >, " and ' for XHTML text and attribute values. */
void html_escape(FILE *f, const char *s);

#endif
