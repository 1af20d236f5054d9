#!/usr/bin/env python3
# What each host's link of the emulated cluster (tests/cluster/bed.sh) carried, against
# what the collective had in flight on it (tests/cluster/RESULTS.md, "Tree at 4 hosts:
# where the links' time goes").
#
#   linkuse.py sample OUT DT STOP   (bed.sh --sample runs it in the switch's namespace)
#       every DT seconds, one line to OUT: CLOCK_MONOTONIC seconds, then per switch port
#       p<h>: bytes from host h and bytes to host h (/proc/net/dev of the namespace, so
#       what left host h's shaper and what left the switch's shaper towards h), until the
#       file STOP exists
#   linkuse.py report SAMPLES RANK0_LOG [--window MS] [--rate MBIT]
#       RANK0_LOG: rank 0's output of a run with GRADSYNC_LOG=debug,coll (each message of
#       each link, both ends on rank 0's clock, and that clock's CLOCK_MONOTONIC origin).
#       Per host and direction, over the windows (default 20 ms) within the logged
#       messages' span: the share with a message in flight over the whole window, the
#       share of those in which the link moved under a tenth of its rate ("stalled"),
#       and the link's mean rate while a message was in flight.
import re
import sys
import time


def sample(out, dt, stop):
    import os
    with open(out, "w") as f:
        while not os.path.exists(stop):
            t = time.monotonic()
            with open("/proc/net/dev") as d:
                lines = d.readlines()[2:]
            cols = []
            for line in lines:
                name, rest = line.split(":", 1)
                name = name.strip()
                if re.fullmatch(r"p[0-9]+", name):
                    v = rest.split()
                    # the switch's port: received = from the host, transmitted = to it
                    cols.append("%s %s %s" % (name, v[0], v[8]))
            f.write("%.6f %s\n" % (t, " ".join(cols)))
            time.sleep(max(0.0, dt - (time.monotonic() - t)))


MSG = re.compile(r"link (\d+)->(\d+) message tag=\S+ bytes=(\d+): send posted (\S+) ms, "
                 r"receive posted (\S+) ms, received (\S+) ms")
BASE = re.compile(r"link messages: times in ms from CLOCK_MONOTONIC (\S+) s")


def report(samples, log, window_ms, rate_mbit, host_of):
    msgs, base = [], None
    with open(log) as f:
        for line in f:
            m = BASE.search(line)
            if m:
                base = float(m.group(1)) * 1e3
            m = MSG.search(line)
            if m:
                s, d, b, ps, pr, rc = m.groups()
                # in flight once both ends posted, until the receiver had it
                msgs.append((host_of(int(s)), host_of(int(d)), max(float(ps), float(pr)),
                             float(rc)))
    if base is None or not msgs:
        sys.exit("linkuse: %s has no message log (run with GRADSYNC_LOG=debug,coll)" % log)
    msgs = [m for m in msgs if m[0] != m[1]]
    hosts = max(max(m[0], m[1]) for m in msgs) + 1
    rows = []
    with open(samples) as f:
        for line in f:
            v = line.split()
            d = {int(v[i][1:]): (int(v[i + 1]), int(v[i + 2])) for i in range(1, len(v), 3)}
            if len(d) >= hosts:
                rows.append((float(v[0]) * 1e3 - base, d))
    lo, hi = min(m[2] for m in msgs), max(m[3] for m in msgs)
    line_rate = rate_mbit * 1e6 / 8 / 1e3  # bytes per ms
    step = max(1, round(window_ms / ((rows[-1][0] - rows[0][0]) / max(1, len(rows) - 1))))
    acc = {}
    for i in range(0, len(rows) - step, step):
        a, b = rows[i][0], rows[i + step][0]
        if a < lo or b > hi:
            continue
        for h in range(hosts):
            for k, name in ((0, "out"), (1, "in")):
                r = (rows[i + step][1][h][k] - rows[i][1][h][k]) / (b - a)
                busy = any((m[0] if k == 0 else m[1]) == h and m[2] <= a and m[3] >= b
                           for m in msgs)
                x = acc.setdefault((h, name), [0, 0, 0, 0.0])
                x[0] += 1
                x[1] += busy
                x[2] += busy and r < 0.1 * line_rate
                x[3] += r if busy else 0
    print("host  link  message in flight  stalled while in flight  MB/s while in flight "
          "(%.0f ms windows, line %.2f MB/s)" % (window_ms, line_rate / 1e3))
    for (h, name), x in sorted(acc.items()):
        print("%4d  %-4s  %16.0f%%  %22.0f%%  %21.2f" % (
            h, name, 100 * x[1] / x[0], 100 * x[2] / max(1, x[1]), x[3] / max(1, x[1]) / 1e3))


def main(argv):
    if len(argv) >= 4 and argv[0] == "sample":
        sample(argv[1], float(argv[2]), argv[3])
        return
    if len(argv) >= 3 and argv[0] == "report":
        opts = {"--window": "20", "--rate": "50", "--ranks-per-host": "1"}
        rest = argv[3:]
        for i in range(0, len(rest) - 1, 2):
            if rest[i] not in opts:
                sys.exit("linkuse: unknown option %s" % rest[i])
            opts[rest[i]] = rest[i + 1]
        per = int(opts["--ranks-per-host"])
        report(argv[1], argv[2], float(opts["--window"]), float(opts["--rate"]),
               lambda r: r // per)
        return
    sys.exit("usage: linkuse.py sample OUT DT STOP | report SAMPLES RANK0_LOG "
             "[--window MS] [--rate MBIT] [--ranks-per-host L]")


if __name__ == "__main__":
    main(sys.argv[1:])
