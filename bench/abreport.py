#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""abreport.py - the summary of bench/ab.sh: new over old, pair by pair.

ab.sh runs the same `pvnet bench` command with an old and a new build,
alternating, PAIRS times, and leaves OUT/pN-old.json and OUT/pN-new.json.
This machine's speed drifts over minutes, so only the two runs of one pair
are compared: for every point (frame size, queues, tx mode, placement, API,
steering) the new run's frame rate over the old one's, each pair's ratio
and their median, with each side's Gbit/s range.

Usage: abreport.py OUT_DIR
"""

import json
import os
import statistics
import sys

KEY = ("frame_size", "queues", "tx_mode", "placement", "api", "steering")


def point(r):
    """The point a result measures, as a printable tuple."""
    return tuple(r.get(k) for k in KEY)


def load_pairs(out):
    """[(old results, new results)] for p1, p2, ... until the first missing pair."""
    pairs = []
    n = 1
    while True:
        old = os.path.join(out, "p%d-old.json" % n)
        new = os.path.join(out, "p%d-new.json" % n)
        if not (os.path.exists(old) and os.path.exists(new)):
            break
        with open(old) as f_old, open(new) as f_new:
            pairs.append((json.load(f_old)["results"], json.load(f_new)["results"]))
        n += 1
    if not pairs:
        raise ValueError("%s holds no pair of runs (p1-old.json, p1-new.json)" % out)
    return pairs


def ratios(pairs):
    """{point: [(new/old Mpps, old Gbit/s, new Gbit/s) per pair]} in the first run's order."""
    table = {}
    for i, (old, new) in enumerate(pairs, 1):
        if [point(r) for r in old] != [point(r) for r in new]:
            raise ValueError("pair %d: the old and the new run measured different points" % i)
        for a, b in zip(old, new):
            if not a["mpps"] > 0:
                raise ValueError("pair %d: the old run of %s moved no frame" % (i, point(a)))
            table.setdefault(point(a), []).append(
                (b["mpps"] / a["mpps"], a["gbit_s"], b["gbit_s"]))
    return table


def report(table):
    lines = ["points: " + ", ".join(KEY) + "; new Mpps / old Mpps, the median and each pair",
             "%-44s %7s  %s" % ("point", "median", "pairs; Gbit/s")]
    for p, v in table.items():
        lines.append("%-44s %6.3fx  %s; old %.2f-%.2f, new %.2f-%.2f" % (
            ", ".join(str(x) for x in p), statistics.median(x[0] for x in v),
            " ".join("%.3f" % x[0] for x in v),
            min(x[1] for x in v), max(x[1] for x in v),
            min(x[2] for x in v), max(x[2] for x in v)))
    return "\n".join(lines)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        print(report(ratios(load_pairs(argv[1]))))
    except (OSError, ValueError, KeyError) as e:
        print("abreport.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
