/*
 * Slow links: a directed link r -> p's rate is the bytes of its messages over the time
 * their data was in flight, from both ends' transfer logs on one clock (report/flight.h).
 * Where those are not known (a report from before them, or clocks between hosts too
 * uncertain), over min(r's time with a send to p outstanding, p's time with a receive
 * from r outstanding) (coll_peer_busy), which behind a slow link also counts the
 * backpressure on its neighbours. A link far below the median link is named, and the
 * host all slow links share, when they share one (on a star of hosts, one host's link
 * carries a ring's flows in and out).
 */
#ifndef GS_REPORT_LINKS_H
#define GS_REPORT_LINKS_H

#include <jansson.h>
#include <stdbool.h>

#include "report/doc.h"
#include "report/report.h"

/* A link is slow below the median of the other links / LINK_SLOW_FACTOR, at every size
 * from LINK_MIN_SIZE up that the case measured (links_slow_persistent). */
/* 4: by their time in flight the links of an even 4-host ring at 100 Mbit/s read
 * 9.7-13.0 MB/s (within 1.35x of each other), a link shaped to a tenth 1.1 MB/s, 10-11x
 * below the others (tests/cluster/RESULTS.md). By the waits' rule (reports without
 * transfer logs) an even ring's busiest link read up to 4.1x below links whose sends went
 * straight into socket buffers, a different link at the next size: a real slow link is
 * slow at every size, a bottleneck that moves is not. */
#define LINK_SLOW_FACTOR 4.0
/* Below this a ring's chunk is a few round trips: the waits are latency, not rate. */
#define LINK_MIN_SIZE (1ull << 20)

struct link_obs {
	int from, to;
	double bytes;
	double send_s;  /* at `from`: a send to `to` outstanding */
	double recv_s;  /* at `to`: a receive from `from` outstanding */
	double flight_s;     /* its messages' data in flight (report/flight.h) */
	double flight_bytes; /* their bytes; 0: in-flight time not known */
	double flight_err_s; /* how far flight_s moves within the clock offset's bounds */
};

struct link_slow {
	int from, to;
	double rate_Bps;
	double median_Bps;
};

/* flight_s is used when the clock offset moves it by at most this share of itself */
#define LINK_CLOCK_TOL 0.25

/* The link's rate rests on its in-flight time (else on both ends' waits). */
bool link_in_flight(const struct link_obs *l);
/* rate of one link, flight_bytes / flight_s, else bytes / min(send_s, recv_s); 0 when it
 * moved nothing */
double link_rate(const struct link_obs *l);

/* Median rate of the links that carried bytes; *nused gets their count. */
double links_median(const struct link_obs *l, int n, int *nused);

/*
 * The slow links among n, each against the median of the others (at least two others
 * carrying bytes), slowest first, at most max; median_Bps is that median. Returns how
 * many. Meant for a ring's links, where every link carries the same bytes.
 */
int links_find_slow(const struct link_obs *l, int n, struct link_slow *out, int max);

/*
 * The links slow at every one of nsizes sizes (size i's nobs[i] links in obs[i]), as
 * links_find_slow judges each size; out gets their figures at the last size (give the
 * largest last), and *min_factor (may be NULL) the smallest median / rate any of them
 * showed over the sizes. nsizes 0: none. Returns how many, at most max.
 */
int links_slow_persistent(struct link_obs *const *obs, const int *nobs, int nsizes,
			  struct link_slow *out, int max, double *min_factor);

/*
 * The one host every slow link touches (from or to), given host_of_rank; -1 for fewer
 * than two links, none shared, or two shared (every link between the same two hosts).
 */
int links_common_host(const struct link_slow *s, int n, const int *host_of_rank, int nranks);

/* Host index per rank of a run's report root (hosts[].host_index, else the rank
 * itself), nr entries, the caller frees it; NULL on ENOMEM. */
int *links_hosts_of(const json_t *root, int nr);

/* A row's "links" are written by rj_row_set_links() (report/rjson.h). Parse them back;
 * returns the count (at most max), 0 when absent. */
int links_from_json(const json_t *row, struct link_obs *l, int max);

/* The report's "Links" section: every ring case's largest AllReduce size, between hosts. */
void section_links(const struct report_set *s, struct rdoc *d);

#endif
