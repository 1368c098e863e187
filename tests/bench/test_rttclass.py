#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/rttclass.py: where compare.sh divides cpurtt's samples into near and far.

Usage: test_rttclass.py BENCH_DIR (the folder holding rttclass.py)
"""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "bench"))
import rttclass  # noqa: E402

FALLBACK = 150


def spread(lo, hi, n):
    """n round trips evenly from lo to hi ns."""
    return [lo + (hi - lo) * i // max(1, n - 1) for i in range(n)]


class FarThreshold(unittest.TestCase):
    def test_gap_below_the_fallback(self):
        # Near 40-68 ns and far 110-270 ns: 150 would cut the far group in two.
        rtts = spread(40, 68, 130) + spread(110, 270, 1000)
        ns, how = rttclass.far_threshold(rtts, FALLBACK)
        self.assertEqual(ns, 110)
        self.assertIn("68 and 110", how)
        self.assertIn("130 near, 1000 far", how)

    def test_gap_above_the_fallback(self):
        rtts = spread(54, 107, 500) + spread(239, 375, 500)
        ns, _ = rttclass.far_threshold(rtts, FALLBACK)
        self.assertEqual(ns, 239)

    def test_short_near_spell_counts(self):
        # 43 near samples in 874 (a spell of about 9 s in three minutes) are a state.
        rtts = spread(43, 56, 43) + spread(111, 265, 831)
        ns, _ = rttclass.far_threshold(rtts, FALLBACK)
        self.assertEqual(ns, 111)

    def test_a_near_spell_below_the_share_counts(self):
        # compare.sh at b6e132c: 12 samples at 50-59 ns among 1273 (2.4 s near in
        # four minutes), fewer than 1 %; the rest 110-240 ns.
        rtts = spread(50, 59, 12) + spread(110, 240, 1261)
        ns, how = rttclass.far_threshold(rtts, FALLBACK)
        self.assertEqual(ns, 110)
        self.assertIn("12 near, 1261 far", how)

    def test_a_few_slow_samples_are_not_a_far_state(self):
        # Preempted samples come out slow: 5 of 805 at the top (under 1 %) are not far.
        ns, how = rttclass.far_threshold(spread(40, 68, 800) + [300] * 5, FALLBACK)
        self.assertEqual(ns, FALLBACK)
        self.assertIn("one group", how)
        # 9 of them (1 %, rounded up) are.
        self.assertEqual(rttclass.far_threshold(spread(40, 68, 800) + [300] * 9, FALLBACK)[0],
                         300)

    def test_the_far_share_is_rounded_up(self):
        # 808 samples: 1 % is 8.08, so the far side needs 9; 8 slow ones are not a state.
        ns, how = rttclass.far_threshold(spread(40, 68, 800) + [300] * 8, FALLBACK)
        self.assertEqual(ns, FALLBACK)
        self.assertIn("one group", how)

    def test_a_gap_of_exactly_the_ratio_counts(self):
        # 100 and 140 ns are MIN_RATIO (1.4) apart: two states.
        self.assertEqual(rttclass.far_threshold([100] * 10 + [140] * 10, FALLBACK)[0], 140)

    def test_zero_samples_are_left_out(self):
        # A sample of 0 is none measured: not a state of its own, nor a ratio to divide by.
        ns, how = rttclass.far_threshold([0] * 10 + spread(40, 68, 100) + spread(110, 270, 100),
                                         FALLBACK)
        self.assertEqual(ns, 110)
        self.assertIn("100 near, 100 far of 200", how)

    def test_order_does_not_matter(self):
        rtts = spread(110, 270, 300) + spread(40, 68, 40)
        rtts = rtts[::2] + rtts[1::2]
        self.assertEqual(rttclass.far_threshold(rtts, FALLBACK)[0], 110)

    def test_one_group_keeps_the_fallback(self):
        ns, how = rttclass.far_threshold(spread(120, 260, 800), FALLBACK)
        self.assertEqual(ns, FALLBACK)
        self.assertIn("one group, 120-260 ns", how)

    def test_lone_outliers_are_not_a_state(self):
        # Two preempted samples far above the rest: not enough for a state.
        ns, _ = rttclass.far_threshold(spread(120, 160, 800) + [900, 950], FALLBACK)
        self.assertEqual(ns, FALLBACK)
        ns, _ = rttclass.far_threshold([5, 6] + spread(120, 160, 800), FALLBACK)
        self.assertEqual(ns, FALLBACK)

    def test_narrow_gap_is_not_a_state(self):
        # Two groups only 1.3x apart: one state whose samples wander.
        ns, _ = rttclass.far_threshold(spread(100, 110, 300) + spread(143, 160, 300), FALLBACK)
        self.assertEqual(ns, FALLBACK)

    def test_too_few_samples(self):
        for rtts in ([], [80], [0, 0, 0]):
            ns, how = rttclass.far_threshold(rtts, FALLBACK)
            self.assertEqual(ns, FALLBACK)
            self.assertIn("too few for two states", how)
        # Six samples cannot give both sides the three they need.
        self.assertEqual(rttclass.far_threshold([50, 50, 50, 300, 300], FALLBACK)[0], FALLBACK)
        self.assertEqual(rttclass.far_threshold([50, 50, 50, 300, 300, 300], FALLBACK)[0], 300)


class ReadSamples(unittest.TestCase):
    def write(self, text):
        f = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
        self.addCleanup(os.unlink, f.name)
        f.write(text)
        f.close()
        return f.name

    def test_reads_cpurtt_lines(self):
        path = self.write("1796168002.036781 61\n1796168002.236900 240\n")
        self.assertEqual(rttclass.read_samples(path),
                         [(1796168002.036781, 61), (1796168002.2369, 240)])

    def test_refuses_other_lines(self):
        for text in ("1796168002.0 61 extra\n", "61\n", "1796168002.0 sixty\n"):
            with self.assertRaises(ValueError):
                rttclass.read_samples(self.write(text))

    def test_main_reports_a_bad_file(self):
        self.assertEqual(rttclass.main(["rttclass.py", self.write("garbage\n")]), 1)
        self.assertEqual(rttclass.main(["rttclass.py"]), 2)


if __name__ == "__main__":
    unittest.main()
