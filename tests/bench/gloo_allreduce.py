#!/usr/bin/python3
"""Peer for tests/bench/bench_peers.sh: torch.distributed's Gloo AllReduce (float32 sum,
in place, CPU tensors, TCP on loopback), timed like gradsync and mpi_allreduce.c: the
ranks meet once per size, then warm-up and timed iterations back to back, each timed on
every rank; per iteration the ranks' mean time counts, averaged.

  gloo_allreduce.py RANKS LO_BYTES HI_BYTES ITERS [PORT]

Prints "size_bytes avg_us busbw_GBps" lines (sizes x4 from LO to HI) from rank 0.
"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WARMUP = 3


def run(rank, n, lo, hi, iters, port):
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=n)
    buf = torch.zeros(hi // 4, dtype=torch.float32)  # every page touched before timing
    s = lo
    while s <= hi:
        t = buf[: s // 4]
        dt = torch.zeros(WARMUP + iters, dtype=torch.float64)
        dist.barrier()
        for i in range(WARMUP + iters):
            t0 = time.perf_counter()
            dist.all_reduce(t)
            dt[i] = time.perf_counter() - t0
        dist.all_reduce(dt, op=dist.ReduceOp.SUM)
        if rank == 0:
            avg = float(dt[WARMUP:].mean()) / n
            print(f"{s} {avg * 1e6:.1f} {s / avg / 1e9 * 2.0 * (n - 1) / n:.3f}", flush=True)
        s *= 4
    dist.destroy_process_group()


if __name__ == "__main__":
    n, lo, hi, iters = (int(x) for x in sys.argv[1:5])
    port = int(sys.argv[5]) if len(sys.argv) > 5 else 29533
    mp.spawn(run, args=(n, lo, hi, iters, port), nprocs=n, join=True)
