#!/usr/bin/env python3
# A fluid model of the executor (src/coll/exec.c) on a star of hosts, one rank each: every
# host's link carries 1 unit of bytes per unit of time each way, shared max-min fairly by
# the transfers on it; a transfer flows once both ends posted it (a clear-to-send); a
# piece's step ends when all its transfers did; `channels` pieces in flight; with the gate
# (a staggered schedule) pieces enter each step in piece order, at most `cap` at once.
# Prints the AllReduce time per byte of buffer (S), the number the alpha-beta model calls
# the wire factor: ring 2(n-1)/n, the double binary tree 2 (its busiest link's load).
# No latency, no CPU: what the schedule and the pipelining allow, nothing else.
# usage: tests/cluster/pipesim.py [options] [HOSTS...]   (default 4 8)
#   --flows      the tree's steps, per host link: which flows one piece puts on it at once
#   --links      per host link under the model: share of the run with a transfer on it and
#                its rate meanwhile (what tests/cluster/linkuse.py measures on the bed)
#   --share R    how a link is shared: maxmin (default; what src/report/pipesim.c does),
#                proportional (TCP as Kelly's proportional fairness), equal (each flow its
#                share of its busiest link, nothing handed on)
#   --fifo       a peer pair's messages go one after the other (one connection), not side
#                by side
#   --latency MS each transfer starts MS after both ends posted it (a clear-to-send trip),
#                at 50 Mbit/s and 16 MiB (the bed's 4 x 1 iteration runs)
# (tests/cluster/RESULTS.md, "Tree at 4 hosts: where the links' time goes")
import math
import sys

OPT = dict(share="maxmin", fifo=False, latency=0.0)
USE = {}


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


def share(flows):
    """Each flowing transfer's rate, links of 1 each way, by OPT's rule."""
    rate = {f: 0.0 for f in flows}
    unsettled = set(flows)  # flows whose rate is not fixed yet
    if OPT["fifo"]:  # only the oldest message of each pair moves (dicts keep insertion order)
        heads = {}
        for f in flows:
            heads.setdefault((f[0], f[1]), f)
        unsettled = set(heads.values())
    links = lambda f: (("out", f[0]), ("in", f[1]))
    users = {}
    for f in unsettled:
        for link in links(f):
            users[link] = users.get(link, 0) + 1
    if OPT["share"] == "equal":
        for f in unsettled:
            rate[f] = min(1 / users[link] for link in links(f))
        return rate
    if OPT["share"] == "proportional":
        # maximise the sum of log rates: prices on the links, rate = 1 / (sum of prices)
        fl, ls = list(unsettled), sorted(users)
        idx = {l: i for i, l in enumerate(ls)}
        fp = [[idx[l] for l in links(f)] for f in fl]
        price = [1.0] * len(ls)
        for it in range(3000):
            x = [1 / sum(price[i] for i in p) for p in fp]
            load = [0.0] * len(ls)
            for p, v in zip(fp, x):
                for i in p:
                    load[i] += v
            g = 0.05 if it < 2000 else 0.01
            price = [max(1e-6, pr * (1 + g * (ld - 1))) for pr, ld in zip(price, load)]
        over = max(load)
        for f, v in zip(fl, x):
            rate[f] = v / over if over > 1 else v
        return rate
    cap_left = {l: 1.0 for l in users}
    while unsettled:  # max-min fair: fill the tightest link first
        users = {}
        for f in unsettled:
            for link in links(f):
                users[link] = users.get(link, 0) + 1
        s = min(cap_left[l] / users[l] for l in users)
        tight = {l for l in users if cap_left[l] / users[l] <= s * (1 + 1e-12)}
        for f in [f for f in unsettled if any(l in tight for l in links(f))]:
            rate[f] = s
            unsettled.discard(f)
            for link in links(f):
                cap_left[link] -= s
    return rate


def simulate(n, build, npieces, channels, gate):
    sch = [build(n, r) for r in range(n)]
    nsteps = len(sch[0])
    cap = max(1, math.ceil(channels / nsteps)) if gate else npieces
    ranks = [dict(next=0, slots=[], entered=[0] * nsteps, inside=[0] * nsteps) for _ in range(n)]
    half, flows, left = {}, {}, {}
    done = [0] * n
    pend, now = [], [0.0]
    # OPT["latency"] ms, in units of one piece's buffer through a link: 16 MiB at 50 Mbit/s
    lat = OPT["latency"] / 1e3 / (16 * 2**20 / 6.25e6) * npieces

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
                        half.pop(key)
                        pend.append((now[0] + lat, key, b))
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
    while flows or pend:
        for e in [e for e in pend if e[0] <= t + 1e-12]:
            pend.remove(e)
            flows[e[1]] = e[2]
        if not flows:
            t = now[0] = min(e[0] for e in pend)
            continue
        rate = share(flows)
        dt = min(flows[f] / rate[f] for f in flows if rate[f] > 0)
        if pend:
            dt = min(dt, min(e[0] for e in pend) - t)
        for f in flows:
            for link in (("out", f[0]), ("in", f[1])):
                u = USE.setdefault(link, [0.0, 0.0])
                u[1] += rate[f] * dt
        for link in {l for f in flows for l in (("out", f[0]), ("in", f[1]))}:
            USE[link][0] += dt
        t += dt
        now[0] = t
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


def flows_table(n):
    """Per step of the tree at n hosts, the flows one piece puts on each host's link."""
    sch = [tree_steps(n, r) for r in range(n)]
    print("tree, %d hosts: step: host link (flows of one piece at once)" % n)
    for k in range(len(sch[0])):
        out, inn = {}, {}
        for r in range(n):
            for q, _ in sch[r][k][0]:
                out.setdefault(r, []).append(q)
                inn.setdefault(q, []).append(r)
        print("  step %d: " % k + "  ".join(
            ["%d out -> %s" % (h, ",".join(map(str, v))) for h, v in sorted(out.items())] +
            ["%d in <- %s" % (h, ",".join(map(str, v))) for h, v in sorted(inn.items())]))


def main(argv):
    hosts, flows, use = [], False, False
    while argv:
        a = argv.pop(0)
        if a == "--flows":
            flows = True
        elif a == "--links":
            use = True
        elif a == "--fifo":
            OPT["fifo"] = True
        elif a == "--share" and argv and argv[0] in ("maxmin", "proportional", "equal"):
            OPT["share"] = argv.pop(0)
        elif a == "--latency" and argv:
            OPT["latency"] = float(argv.pop(0))
        elif a.isdigit() and int(a) > 1:
            hosts.append(int(a))
        else:
            sys.exit("pipesim.py: bad argument %s (see the head of the file)" % a)
    hosts = hosts or [4, 8]
    if flows:
        for n in hosts:
            flows_table(n)
    print("hosts  channels  ring    tree lockstep  tree staggered  (time per byte, S; model: ring 2(n-1)/n, tree 2)")
    for n in hosts:
        P, ch = 32, 8
        ring = simulate(n, ring_steps, P, ch, False)
        lock = simulate(n, tree_steps, P, ch, False)
        USE.clear()
        tree = simulate(n, tree_steps, P, ch, True)
        print("%5d  %8d  %5.3f  %13.3f  %14.3f" % (n, ch, ring, lock, tree))
        if use:
            print("  tree staggered, per host link: transfer on it / rate meanwhile (1 = line)")
            for (d, h), (busy, moved) in sorted(USE.items(), key=lambda x: (x[0][1], x[0][0])):
                print("    host %d %-3s  %3.0f%%  %.2f" % (h, d, 100 * busy / (tree * P), moved / busy))


if __name__ == "__main__":
    main(sys.argv[1:])
