/*
 * A fluid model of the executor's pipelining (coll/exec.c) for the tier model: the
 * transfers of one schedule, run over `pieces` pieces with `inflight` in flight, each
 * port (a host's link up or down, a rank's bytes out or in) carrying one byte per unit
 * of time shared max-min fairly among the transfers on it, a transfer flowing once both
 * its ends are in its step (a clear-to-send), a piece's step ending when all its
 * transfers did, and for a staggered schedule the executor's gate (pieces enter each
 * step in order, at most ceil(inflight / steps) at once). No latency, no CPU: what the
 * schedule and the pipelining allow. Pure; tests/cluster/pipesim.py is the same model.
 */
#ifndef GS_REPORT_PIPESIM_H
#define GS_REPORT_PIPESIM_H

#include <stdbool.h>

/* One transfer of one piece: from rank src to rank dst in step `step`, through ports
 * port_out and port_in (0 .. nports-1, or -1: a port the model does not limit). */
struct psim_xfer {
	int src, dst;
	int step;
	int port_out, port_in;
	double bytes;
};

/*
 * Time for `pieces` pieces of the one-piece transfers x[0..nx) (ranks 0..nranks-1, steps
 * 0..nsteps-1) with `inflight` pieces in flight per rank, in units of one byte through
 * one port. Returns the time, or -errno (-EINVAL, -ENOMEM, -EDEADLK when no transfer can
 * move although pieces are left: a schedule whose pairs do not match).
 */
double psim_run(const struct psim_xfer *x, int nx, int nranks, int nsteps, int nports,
		int pieces, int inflight, bool gate);

#endif
