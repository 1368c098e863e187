#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rttclass.py - where bench/cpurtt's samples divide into near and far.

The host keeps this machine's two vCPUs in one of two states, and the
cache-line round trip between them (bench/cpurtt) falls into two groups with
a gap between them; where the gap lies differs from machine to machine
(54-107 ns near and 239-375 far on one, 40-68 and 110-270 on another).  A
fixed threshold that suits one machine cuts through a group on the next, so
compare.sh takes it from the samples of its own run: the widest gap, as a
ratio, between two neighbouring samples, if each side holds enough of them.
Without such a gap the threshold given as the fallback is used.

Usage: rttclass.py CPURTT_FILE  (prints the threshold and how it was chosen)
"""

import math
import sys

# Two neighbouring samples this far apart (as a ratio) are in different states.
MIN_RATIO = 1.4
# Each side of the gap holds at least this many samples, and the far side this
# share of them too: a preempted sample comes out slow, never fast, so a few
# slow ones at the top are not a state of their own, while a few fast ones at
# the bottom are a near spell (3 samples are 0.6 s of cpurtt's 200 ms ones).
MIN_SAMPLES = 3
MIN_FAR_SHARE = 0.01


def far_threshold(rtts, fallback):
    """(threshold ns, how) for round trips @rtts: a sample at or above the
    threshold is far, one below it near."""
    s = sorted(r for r in rtts if r > 0)
    near_min = MIN_SAMPLES
    far_min = max(MIN_SAMPLES, math.ceil(len(s) * MIN_FAR_SHARE))
    if len(s) < near_min + far_min:
        return fallback, "fixed (%d samples, too few for two states)" % len(s)
    best, at = 0.0, None
    for i in range(near_min, len(s) - far_min + 1):
        ratio = s[i] / s[i - 1]
        if ratio > best:
            best, at = ratio, i
    if at is None or best < MIN_RATIO:
        return fallback, "fixed (one group, %d-%d ns)" % (s[0], s[-1])
    return s[at], "the gap between %d and %d ns (%d near, %d far of %d samples)" % (
        s[at - 1], s[at], at, len(s) - at, len(s))


def read_samples(path):
    """The round trips of a cpurtt output file ("SECONDS NS" per line)."""
    out = []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) != 2:
                raise ValueError("%s: not a cpurtt line: %r" % (path, line))
            out.append((float(fields[0]), int(fields[1])))
    return out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: rttclass.py CPURTT_FILE\n")
        return 2
    try:
        samples = read_samples(argv[1])
    except (OSError, ValueError) as e:
        sys.stderr.write("rttclass.py: %s\n" % e)
        return 1
    ns, how = far_threshold([r for _, r in samples], 150)
    print("%d %s" % (ns, how))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
