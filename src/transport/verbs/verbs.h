/*
 * RDMA verbs transports: ib (InfiniBand link layer, LID routed) and roce (Ethernet link
 * layer, RoCEv2 GID routed), one implementation behind both; verbs_stub.c stands in when
 * the build has no libibverbs.
 *
 * Beyond transport.h: post_send/post_recv return -EAGAIN past 1024 outstanding requests per
 * peer and direction; messages are written zero-copy into the receiver's region, so both
 * regions must stay registered until the completion. cq_mode = event makes poll() sleep
 * up to 1 ms on the completion channel when nothing is ready. The endpoint record lists
 * 3 bytes per QP per connected peer: connections beyond ~150 QPs per rank return -E2BIG.
 * Errors are sticky: a completion error makes this and every later poll/post return -EIO;
 * the job's abort flag makes poll return -ECANCELED (like tcp and shm).
 * Receive flush: with env->gdr_flush, a receive into a MEM_CUDA region completes only after
 * a loopback RDMA READ of it (GPUDirect RDMA before Hopper); the path note counts flushes.
 * Test/diagnostic knob: GRADSYNC_VERBS_FLUSH=1 in the environment flushes every receive,
 * host memory too, so the flush path runs without a GPU (e.g. on Soft-RoCE).
 */
#ifndef GS_TRANSPORT_VERBS_H
#define GS_TRANSPORT_VERBS_H

#include "transport/transport.h"

extern const struct transport_ops ib_ops, roce_ops;

#endif
