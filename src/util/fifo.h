/*
 * The one FIFO list of the tree: intrusive and singly linked, O(1) push at the tail (or,
 * for a stack, at the head) and pop at the head, take the oldest element a predicate
 * accepts (what a FIFO match by tag needs), unlink given the predecessor. An element embeds
 * a struct fifo_link and is on at most one list through it; fifo_entry() gets the element
 * back. Not thread-safe: the owner's lock, if any, covers the list.
 */
#ifndef GS_UTIL_FIFO_H
#define GS_UTIL_FIFO_H

#include <stdbool.h>
#include <stddef.h>

struct fifo_link {
	struct fifo_link *next;
};

struct fifo {
	struct fifo_link *head, *tail;
};

#define fifo_entry(link, type, member) ((type *)((char *)(link) - offsetof(type, member)))

static inline bool fifo_empty(const struct fifo *q)
{
	return !q->head;
}

/* Its length, by a walk: for diagnostics, never on a data path. */
static inline size_t fifo_len(const struct fifo *q)
{
	size_t n = 0;

	for (const struct fifo_link *l = q->head; l; l = l->next)
		n++;
	return n;
}

static inline void fifo_push(struct fifo *q, struct fifo_link *l)
{
	l->next = NULL;
	if (q->tail)
		q->tail->next = l;
	else
		q->head = l;
	q->tail = l;
}

/* l at the head: a free list used as a stack hands out the element freed last, whose
 * memory was written last (cached; on the VM a page not written lately costs 10-20 us at
 * its next write: tcp's 4096 requests handed out in FIFO order cost 3-4 us an AllReduce
 * over a run's first 2048 AllReduces, tcp.c tcp_poll). */
static inline void fifo_push_head(struct fifo *q, struct fifo_link *l)
{
	l->next = q->head;
	q->head = l;
	if (!q->tail)
		q->tail = l;
}

/* Take l off q; prev is the link before it, NULL when l is the head. */
static inline void fifo_unlink(struct fifo *q, struct fifo_link *prev, struct fifo_link *l)
{
	if (prev)
		prev->next = l->next;
	else
		q->head = l->next;
	if (q->tail == l)
		q->tail = prev;
	l->next = NULL;
}

/* The head, taken off q; NULL when q is empty. */
static inline struct fifo_link *fifo_pop(struct fifo *q)
{
	struct fifo_link *l = q->head;

	if (l)
		fifo_unlink(q, NULL, l);
	return l;
}

/* The oldest element of q that match() accepts (arg passed on), taken off q; NULL when
 * none does. */
static inline struct fifo_link *fifo_take(struct fifo *q,
					  bool (*match)(const struct fifo_link *l, const void *arg),
					  const void *arg)
{
	struct fifo_link *prev = NULL, *l;

	for (l = q->head; l; prev = l, l = l->next) {
		if (match(l, arg)) {
			fifo_unlink(q, prev, l);
			return l;
		}
	}
	return NULL;
}

#endif
