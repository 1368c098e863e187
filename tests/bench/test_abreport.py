#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/abreport.py: new over old, pair by pair, from bench/ab.sh's JSON files.

Usage: test_abreport.py BENCH_DIR (the folder holding abreport.py)
"""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "bench"))
import abreport  # noqa: E402


def result(size, mpps, mode="map"):
    return {"frame_size": size, "queues": 1, "tx_mode": mode, "placement": "split",
            "api": "zerocopy", "steering": "queue", "mpps": mpps,
            "gbit_s": mpps * size * 8 / 1000}


class Report(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.out = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def write(self, n, side, results):
        with open(os.path.join(self.out, "p%d-%s.json" % (n, side)), "w") as f:
            json.dump({"results": results}, f)

    def test_ratio_per_pair_and_median(self):
        # Pair 1: 64 B 8 -> 10 (1.25), 9000 B 2 -> 2 (1.0); pair 2: 4 -> 4.4, 2 -> 1.8;
        # pair 3: 8 -> 8.8, 2 -> 2.2.  Medians 1.1 and 1.0.
        for n, (o64, n64, o9k, n9k) in enumerate([(8, 10, 2, 2), (4, 4.4, 2, 1.8),
                                                   (8, 8.8, 2, 2.2)], 1):
            self.write(n, "old", [result(64, o64), result(9000, o9k)])
            self.write(n, "new", [result(64, n64), result(9000, n9k)])
        table = abreport.ratios(abreport.load_pairs(self.out))
        got = {p[0]: [round(x[0], 6) for x in v] for p, v in table.items()}
        self.assertEqual(got, {64: [1.25, 1.1, 1.1], 9000: [1.0, 0.9, 1.1]})
        text = abreport.report(table)
        self.assertIn("64, 1, map, split, zerocopy, queue", text)
        self.assertIn(" 1.100x  1.250 1.100 1.100", text)
        self.assertIn(" 1.000x  1.000 0.900 1.100", text)
        # Each side's Gbit/s range over the pairs: 64 B old 2.048-4.096, new 2.2528-5.12.
        self.assertIn("1.100 1.100; old 2.05-4.10, new 2.25-5.12", text)
        self.assertIn("1.100; old 144.00-144.00, new 129.60-158.40", text)

    def test_pairs_end_at_the_first_missing_side(self):
        self.write(1, "old", [result(64, 1)])
        self.write(1, "new", [result(64, 2)])
        self.write(2, "old", [result(64, 1)])  # its new run never finished
        self.assertEqual(len(abreport.load_pairs(self.out)), 1)

    def test_no_pair_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "no pair"):
            abreport.load_pairs(self.out)
        self.assertEqual(abreport.main(["abreport.py", self.out]), 1)

    def test_different_points_are_an_error(self):
        self.write(1, "old", [result(64, 1)])
        self.write(1, "new", [result(64, 1, mode="copy")])
        with self.assertRaisesRegex(ValueError, "different points"):
            abreport.ratios(abreport.load_pairs(self.out))

    def test_an_old_run_without_frames_is_an_error(self):
        self.write(1, "old", [result(64, 0)])
        self.write(1, "new", [result(64, 1)])
        with self.assertRaisesRegex(ValueError, "moved no frame"):
            abreport.ratios(abreport.load_pairs(self.out))


    def test_a_failed_run_is_refused(self):
        failed = dict(result(64, 5), error="2 corrupt frames")
        self.write(1, "old", [result(64, 4)])
        self.write(1, "new", [failed])
        with self.assertRaisesRegex(ValueError, "pair 1: the new run of 64, .* failed: 2 corrupt"):
            abreport.ratios(abreport.load_pairs(self.out))

    def test_a_failed_old_run_is_refused(self):
        self.write(1, "old", [dict(result(64, 4), error="1 frames out of order")])
        self.write(1, "new", [result(64, 5)])
        with self.assertRaisesRegex(ValueError, "pair 1: the old run of 64, .* failed: 1 frames"):
            abreport.ratios(abreport.load_pairs(self.out))

    def test_a_rate_that_could_not_be_known_is_an_error(self):
        self.write(1, "old", [result(64, 4)])
        self.write(1, "new", [dict(result(64, 4), mpps=None)])
        with self.assertRaisesRegex(ValueError, "has no frame rate"):
            abreport.ratios(abreport.load_pairs(self.out))
        self.write(1, "old", [dict(result(64, 4), mpps=None)])
        with self.assertRaisesRegex(ValueError, "moved no frame"):
            abreport.ratios(abreport.load_pairs(self.out))

    def test_a_point_measured_twice_is_counted_apart(self):
        # -q 1,8,1: the first and the third run are the same point, not two samples of one.
        q8 = dict(result(64, 2), queues=8)
        self.write(1, "old", [result(64, 4), q8, result(64, 4)])
        self.write(1, "new", [result(64, 5), dict(q8, mpps=3), result(64, 2)])
        table = abreport.ratios(abreport.load_pairs(self.out))
        self.assertEqual([len(v) for v in table.values()], [1, 1, 1])
        self.assertEqual([round(v[0][0], 6) for v in table.values()], [1.25, 1.5, 0.5])
        self.assertIn("64, 1, map, split, zerocopy, queue, #2", abreport.report(table))

    def test_migration_and_verification_are_part_of_the_point(self):
        self.write(1, "old", [dict(result(64, 4), migrate=False, verify="full")])
        self.write(1, "new", [dict(result(64, 4), migrate=True, verify="full")])
        with self.assertRaisesRegex(ValueError, "different points"):
            abreport.ratios(abreport.load_pairs(self.out))
        self.write(1, "new", [dict(result(64, 4), migrate=False, verify="sampled")])
        with self.assertRaisesRegex(ValueError, "different points"):
            abreport.ratios(abreport.load_pairs(self.out))


if __name__ == "__main__":
    unittest.main()
