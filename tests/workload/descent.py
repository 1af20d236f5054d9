"""Coordinate descent with halving steps: how fit_conv.py and fit_bn.py fit their rows."""


def descend(cost, p, free=lambda i: True, scale=lambda i: 1.0, stop=1e-3):
    """p moved coordinate by coordinate while cost(p) falls: each free coordinate i tries
    +- step x scale(i), the first that lowers the cost is kept, and the step halves once no
    coordinate moves, down to stop. A cost of inf refuses a point (a bound)."""
    p, best, step = list(p), cost(p), 1.0
    while step > stop:
        moved = False
        for i in range(len(p)):
            if not free(i):
                continue
            for d in (step, -step):
                q = list(p)
                q[i] += d * scale(i)
                c = cost(q)
                if c < best - 1e-12:
                    p, best, moved = q, c, True
                    break
        if not moved:
            step /= 2
    return p
