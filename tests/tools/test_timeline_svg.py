"""profiles/timeline_svg.py: lesson 17's and 19's timeline files as Gantt charts (the committed
charts are checked with every other picture: test_pictures.py)."""
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))

import timeline_svg  # noqa: E402  (after the path is set)

SVG = "{http://www.w3.org/2000/svg}"

LESSON_19 = """# ./lesson19 --gpus 2 --tokens 64 --timeline: 2 NVIDIA H200, 2026-11-28, commit abc1234
# (a comment that goes on)

64 tokens, overlapped, 1 chunk(s): each rank's timeline of one layer
rank 0:
  SMs                -6.0 ..       0.0  NCCL
  SMs                 1.0 ..      50.0  GEMM 1, rows of rank 0
  copy engine        10.0 ..      20.0  pull rows of rank 1
rank 1:
  SMs                 1.0 ..      52.0  GEMM 1, rows of rank 1

# ./lesson19 --gpus 4 --tokens 128 --timeline: 4 NVIDIA H100, 2026-11-29, commit def5678

128 tokens, overlapped, 1 chunk(s): each rank's timeline of one layer
rank 0:
  SMs                 0.0 ..     400.0  GEMM 2, rows of rank 3
"""

LESSON_17 = """# lesson 17's MLP chain: chain_timeline on NVIDIA H200, 2026-11-27, commit c102ce4
128 tokens, stream order (lesson 16):
  run 1: GEMM 1      0.0 ..     47.6 us   GEMM 2    543.2 ..    589.1 us   GEMM 2 starts  +495.6 us after GEMM 1 ends
  run 2: GEMM 1      0.0 ..     47.6 us   GEMM 2     49.2 ..     96.0 us   GEMM 2 starts    +1.5 us after GEMM 1 ends
128 tokens, dependent launch (lesson 17):
  run 1: GEMM 1      0.0 ..     48.4 us   GEMM 2    530.9 ..    576.5 us   GEMM 2 starts  +482.6 us after GEMM 1 ends
  run 2: GEMM 1      0.0 ..     48.9 us   GEMM 2     36.9 ..     94.2 us   GEMM 2 starts   -12.0 us after GEMM 1 ends
512 tokens, stream order (lesson 16):
  run 1: GEMM 1      0.0 ..     96.3 us   GEMM 2     97.5 ..    184.3 us   GEMM 2 starts    +1.3 us after GEMM 1 ends
"""


class Reading(unittest.TestCase):
    def test_lesson_19_rows_per_rank_and_engine_under_their_heading(self):
        chart = timeline_svg.read_timeline(LESSON_19, 64)
        self.assertEqual([row.name for row in chart.rows],
                         ["overlapped: rank 0, SMs", "overlapped: rank 0, copy engine",
                          "overlapped: rank 1, SMs"])
        self.assertEqual([(bar.start, bar.end, bar.kind) for bar in chart.rows[0].bars],
                         [(-6.0, 0.0, "NCCL"), (1.0, 50.0, "GEMM 1")])
        self.assertEqual(chart.rows[1].bars[0].kind, "pull")
        self.assertIn("2 NVIDIA H200, 2026-11-28, commit abc1234: 64 tokens", chart.title)
        later = timeline_svg.read_timeline(LESSON_19, 128)
        self.assertIn("4 NVIDIA H100, 2026-11-29, commit def5678", later.title)

    def test_lesson_17_takes_each_ways_last_run(self):
        chart = timeline_svg.read_timeline(LESSON_17, 128)
        self.assertEqual([row.name for row in chart.rows],
                         ["stream order (lesson 16)", "dependent launch (lesson 17)"])
        self.assertEqual([(bar.label, bar.start) for bar in chart.rows[1].bars],
                         [("GEMM 1", 0.0), ("GEMM 2", 36.9)])

    def test_a_token_count_the_file_lacks_is_one_line(self):
        with self.assertRaisesRegex(timeline_svg.TimelineError, "no section at 256 tokens"):
            timeline_svg.read_timeline(LESSON_17, 256)
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "t.txt"
            path.write_text(LESSON_17)
            self.assertEqual(timeline_svg.main([str(path), "--tokens", "256"]), 1)
            self.assertEqual(timeline_svg.main([str(path) + ".missing", "--tokens", "128"]), 2)


class Drawing(unittest.TestCase):
    def test_the_svg_has_a_bar_per_record_placed_by_its_times(self):
        chart = timeline_svg.read_timeline(LESSON_19, 64)
        root = ElementTree.fromstring(timeline_svg.render_svg(chart))
        bars = [rect for rect in root.iter(SVG + "rect") if rect.find(SVG + "title") is not None]
        self.assertEqual(len(bars), 4)
        by_label = {rect.find(SVG + "title").text.split(":")[0]: rect for rect in bars}
        gemm, pull = by_label["GEMM 1, rows of rank 0"], by_label["pull rows of rank 1"]
        # The pull (10-20 us) starts after the GEMM (1-50 us) and is a fifth of its length.
        self.assertGreater(float(pull.get("x")), float(gemm.get("x")))
        self.assertAlmostEqual(float(pull.get("width")) / float(gemm.get("width")), 10 / 49, places=2)
        for rect in bars:
            self.assertGreaterEqual(float(rect.get("x")), timeline_svg.LEFT - 0.1)
            self.assertLessEqual(float(rect.get("x")) + float(rect.get("width")),
                                 timeline_svg.WIDTH - timeline_svg.RIGHT + 0.1)
        texts = [text.text for text in root.iter(SVG + "text")]
        self.assertIn("microseconds", texts)
        self.assertTrue({"GEMM 1", "NCCL", "pull"} <= set(texts))

    def test_overlapping_bars_share_their_row_in_lanes_and_the_legend_is_inside(self):
        chart = timeline_svg.read_timeline(LESSON_17, 128)
        self.assertEqual(timeline_svg.lanes_of(chart.rows[0].bars), [0, 0])
        self.assertEqual(timeline_svg.lanes_of(chart.rows[1].bars), [0, 1])
        root = ElementTree.fromstring(timeline_svg.render_svg(chart))
        height = float(root.get("height"))
        for element in list(root.iter(SVG + "rect")) + list(root.iter(SVG + "text")):
            self.assertGreaterEqual(float(element.get("y", 0)), 0)
            self.assertLessEqual(float(element.get("y", 0)), height)

    def test_ticks_are_round(self):
        self.assertEqual(timeline_svg.tick_step(370), 50)
        self.assertEqual(timeline_svg.tick_step(96), 10)
        self.assertEqual(timeline_svg.tick_step(1300), 200)


if __name__ == "__main__":
    unittest.main()
