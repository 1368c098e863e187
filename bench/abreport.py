#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""abreport.py - the summary of bench/ab.sh: new over old, pair by pair.

ab.sh runs the same `pvnet bench` command with an old and a new build,
alternating, PAIRS times, and leaves OUT/pN-old.json and OUT/pN-new.json.
This machine's speed drifts over minutes, so only the two runs of one pair
are compared: for every point (frame size, queues, tx mode, placement, API,
steering, migration, verification; a point measured twice in one run, as
`-q 1,8,1` does, counted apart as #2) the new run's frame rate over the
old one's, each pair's ratio and their median, with each side's Gbit/s
range. A run that failed (its result has an "error") is refused, not
compared: its figures are not those of a working data path.

Usage: abreport.py OUT_DIR
"""

import json
import os
import statistics
import sys

KEY = ("frame_size", "queues", "tx_mode", "placement", "api", "steering", "migrate", "verify")


def points(results):
    """Each result's point, a tuple; a point met again in one run gets "#2", "#3"..."""
    seen = {}
    out = []
    for r in results:
        p = tuple(r.get(k) for k in KEY)
        seen[p] = seen.get(p, 0) + 1
        out.append(p if seen[p] == 1 else p + ("#%d" % seen[p],))
    return out


def label(p):
    """A point as text: its values, those a result did not give left out."""
    return ", ".join(str(x) for x in p if x is not None)


def rate(r):
    """A result's frame rate, or None when it has none (null: it could not be known)."""
    v = r.get("mpps")
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


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
        po, pn = points(old), points(new)
        if po != pn:
            raise ValueError("pair %d: the old and the new run measured different points" % i)
        for p, a, b in zip(po, old, new):
            for side, r in (("old", a), ("new", b)):
                if r.get("error"):
                    raise ValueError("pair %d: the %s run of %s failed: %s" %
                                     (i, side, label(p), r["error"]))
            if not (rate(a) or 0) > 0:
                raise ValueError("pair %d: the old run of %s moved no frame" % (i, label(p)))
            if rate(b) is None:
                raise ValueError("pair %d: the new run of %s has no frame rate" % (i, label(p)))
            table.setdefault(p, []).append((b["mpps"] / a["mpps"], a["gbit_s"], b["gbit_s"]))
    return table


def report(table):
    lines = ["points: " + ", ".join(KEY) + " (those given); new Mpps / old Mpps, the median "
             "and each pair",
             "%-44s %7s  %s" % ("point", "median", "pairs; Gbit/s")]
    for p, v in table.items():
        lines.append("%-44s %6.3fx  %s; old %.2f-%.2f, new %.2f-%.2f" % (
            label(p), statistics.median(x[0] for x in v),
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
