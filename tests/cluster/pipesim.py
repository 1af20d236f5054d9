#!/usr/bin/env python3
# A fluid model of the executor (src/coll/exec.c) on a star of hosts, one rank each: every
# host's link carries 1 unit of bytes per unit of time each way, shared max-min fairly by
# the transfers on it; a transfer flows once both ends posted it (a clear-to-send); a
# piece's step ends when all its transfers did; `channels` pieces in flight; with the gate
# (a staggered schedule) pieces enter each step in piece order, at most `cap` at once.
# Prints the AllReduce time per byte of buffer (S), the number the alpha-beta model calls
# the wire factor: ring 2(n-1)/n, the double binary tree 2 (its busiest link's load).
# No latency, no CPU: what the schedule and the pipelining allow, nothing else.
# usage: tests/cluster/pipesim.py [HOSTS...]   (default 4 8)
import math
import sys


def btree(n, r):
    """NCCL's binary tree (src/coll/tree.c btree): up, child0, child1, level."""
    bit = 1
    while bit < n and not bit & r:
        bit <<= 1
    level = (bit & -bit).bit_length() - 1
    if r == 0:
        return -1, -1, (bit >> 1) if n > 1 else -1, level
    up = (r ^ bit) | (bit << 1)
    if up >= n:
        up = r ^ bit
    low = bit >> 1
    d0 = r - low if low else -1
    while low and r + low >= n:
        low >>= 1
    return up, d0, r + low if low else -1, level


def tree_steps(n, r):
    """Rank r's steps of one piece (size 1): each tree reduces half up, then broadcasts."""
    lr = (n - 1).bit_length()
    steps = [([], []) for _ in range(2 * lr)]  # (sends, receives) of (peer, bytes)
    for t in range(2):
        pos = r if not t else ((r - 1) % n if n % 2 else n - 1 - r)
        real = (lambda p: p) if not t else (lambda p: p if p < 0 else ((p + 1) % n if n % 2 else n - 1 - p))
        u, c0, c1, lv = btree(n, pos)
        for c in (c0, c1):
            if c >= 0:
                cl = btree(n, c)[3]
                steps[cl][1].append((real(c), 0.5))
                steps[2 * lr - 1 - cl][0].append((real(c), 0.5))
        if u >= 0:
            steps[lv][0].append((real(u), 0.5))
            steps[2 * lr - 1 - lv][1].append((real(u), 0.5))
    return steps


def ring_steps(n, r):
    return [([((r + 1) % n, 1 / n)], [((r - 1) % n, 1 / n)]) for _ in range(2 * (n - 1))]


def simulate(n, build, npieces, channels, gate):
    sch = [build(n, r) for r in range(n)]
    nsteps = len(sch[0])
    cap = max(1, math.ceil(channels / nsteps)) if gate else npieces
    ranks = [dict(next=0, slots=[], entered=[0] * nsteps, inside=[0] * nsteps) for _ in range(n)]
    half, flows, left = {}, {}, {}
    done = [0] * n

    def enter(r):
        st, moved = ranks[r], True
        while moved:
            moved = False
            while len(st["slots"]) < channels and st["next"] < npieces:
                st["slots"].append([st["next"], 0, False])
                st["next"] += 1
            for sl in list(st["slots"]):
                p, k, inside = sl
                if inside or (gate and (st["entered"][k] != p or st["inside"][k] >= cap)):
                    continue
                st["entered"][k] += 1
                st["inside"][k] += 1
                sl[2] = moved = True
                sends, recvs = sch[r][k]
                keys = [(r, q, p, k, i) for i, (q, _) in enumerate(sends)]
                for j, (q, _) in enumerate(recvs):  # the i-th receive from q pairs with q's i-th send to r
                    ith = sum(1 for y in recvs[:j] if y[0] == q)
                    keys.append((q, r, p, k, [i for i, (x, _) in enumerate(sch[q][k][0]) if x == r][ith]))
                for key, (_, b) in zip(keys, sends + recvs):
                    if key in half:
                        flows[key] = half.pop(key)
                    else:
                        half[key] = b
                left[(r, p)] = len(keys)
                if not keys:
                    step_done(r, sl)

    def step_done(r, sl):
        st = ranks[r]
        st["inside"][sl[1]] -= 1
        if sl[1] + 1 < nsteps:
            sl[1] += 1
            sl[2] = False
        else:
            st["slots"].remove(sl)
            done[r] += 1

    def xfer_done(r, p):
        left[(r, p)] -= 1
        if not left[(r, p)]:
            step_done(r, next(sl for sl in ranks[r]["slots"] if sl[0] == p))

    t = 0.0
    for r in range(n):
        enter(r)
    while flows:
        rate, todo = {}, set(flows)
        cap_left = {}
        for s, d, *_ in flows:
            cap_left[("out", s)] = cap_left[("in", d)] = 1.0
        while todo:  # max-min fair: fill the tightest link first
            users = {}
            for f in todo:
                for link in (("out", f[0]), ("in", f[1])):
                    users[link] = users.get(link, 0) + 1
            share = min(cap_left[l] / users[l] for l in users)
            tight = {l for l in users if cap_left[l] / users[l] <= share * (1 + 1e-12)}
            for f in [f for f in todo if ("out", f[0]) in tight or ("in", f[1]) in tight]:
                rate[f] = share
                todo.discard(f)
                cap_left[("out", f[0])] -= share
                cap_left[("in", f[1])] -= share
        dt = min(flows[f] / rate[f] for f in flows)
        t += dt
        for f in list(flows):
            flows[f] -= rate[f] * dt
            if flows[f] <= 1e-9:
                del flows[f]
                xfer_done(f[0], f[2])
                xfer_done(f[1], f[2])
        for r in range(n):
            enter(r)
    assert done == [npieces] * n, done
    return t / npieces


if __name__ == "__main__":
    print("hosts  channels  ring    tree lockstep  tree staggered  (time per byte, S; model: ring 2(n-1)/n, tree 2)")
    for n in [int(a) for a in sys.argv[1:]] or [4, 8]:
        for ch in (8,):
            P = 32
            print("%5d  %8d  %5.3f  %13.3f  %14.3f" % (n, ch, simulate(n, ring_steps, P, ch, False),
                  simulate(n, tree_steps, P, ch, False), simulate(n, tree_steps, P, ch, True)))
