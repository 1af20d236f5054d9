/*
 * "loop": an in-process test transport between threads of one process, so the layers
 * above (the collective executor) run their real data path in unit tests without
 * sockets. It is not in the transport registry and has no config kind
 * (ops.kind = LOOP_TRANSPORT_KIND); tests use loop_transport_ops directly.
 *
 * Endpoint = the address of the rank's in-process state (valid only within the process,
 * checked against env->job_id). Matching is by (peer, tag), first posted first matched.
 * A send finding no receive is buffered when len <= eager threshold (opts->slot_size,
 * default 4 KiB: the send completes at once) and held otherwise (completes when the
 * receiver's matching receive copies it), so both send-before-receive paths are run.
 * opts->qp_depth (default 64) bounds outstanding sends and, separately, receives;
 * beyond it a post returns -EAGAIN. Every loop transport of a job must stay open
 * until all of them stopped posting (close frees the rank's queues).
 */
#ifndef GS_TRANSPORT_LOOP_H
#define GS_TRANSPORT_LOOP_H

#include "transport/transport.h"

#define LOOP_TRANSPORT_KIND (-1)

extern const struct transport_ops loop_transport_ops;

#endif
