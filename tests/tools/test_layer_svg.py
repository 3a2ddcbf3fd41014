"""profiles/layer_svg.py: lesson 19's layer at every token count as a picture (the committed ones
are checked with every other picture: test_pictures.py)."""
import sys
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))

import layer_svg  # noqa: E402  (after the path is set)

SVG = "{http://www.w3.org/2000/svg}"
HEADER = ("tokens,gpus,chunks,rank,layer,stream_us,one_shot_us,overlapped_us,cublaslt_nccl_us,"
          "gemms_alone_us,one_shot_over_stream,overlapped_over_stream,layer_over_stream,"
          "layer_over_cublaslt,layer_over_gemms_alone,pairs,sm_mhz_median,date,gpu,commit\n")
CSV = HEADER + (
    "64,2,1,0,one-shot,75,74,134,70,52,0.99,1.7,0.99,1.05,1.4,500,1980,d,g,c\n"
    "1,2,1,0,stream,82,86,159,66,67,1.05,1.8,1,1.24,1.23,500,1980,d,g,c\n"
    "1,2,1,1,stream,81,86,158,66,66,1.06,1.8,1,1.24,1.22,500,1980,d,g,c\n"
    "8192,2,1,0,overlapped,1772,1670,1533,1787,1475,0.94,0.85,0.85,0.86,1.06,123,1560,d,g,c\n")


class Drawing(unittest.TestCase):
    def test_one_ranks_rows_in_token_order(self):
        points = layer_svg.read_layer(CSV)
        self.assertEqual([tokens for tokens, _, _ in points], [1, 64, 8192])
        self.assertEqual([layer for _, _, layer in points], ["stream", "one-shot", "overlapped"])
        self.assertEqual(points[0][1]["overlapped_over_stream"], 1.8)
        self.assertEqual(len(layer_svg.read_layer(CSV, rank=1)), 1)

    def test_the_layer_is_drawn_larger_and_below_the_line_where_faster(self):
        root = ElementTree.fromstring(layer_svg.render_svg(layer_svg.read_layer(CSV), "title"))
        circles = [circle for circle in root.iter(SVG + "circle") if circle.get("r") == "5"]
        self.assertEqual(len(circles), 3)  # the layer's, one per token count
        line = next(line for line in root.iter(SVG + "line") if line.get("stroke-dasharray"))
        at_one = float(line.get("y1"))
        # 1 token: the layer is stream order itself (on the line); 8192: faster (below it, larger y).
        self.assertAlmostEqual(float(circles[0].get("cy")), at_one, places=1)
        self.assertGreater(float(circles[2].get("cy")), at_one)
        self.assertLess(float(circles[0].get("cx")), float(circles[2].get("cx")))

    def test_a_file_that_is_not_a_layer_csv_is_one_line(self):
        with self.assertRaisesRegex(layer_svg.LayerError, "needs the columns"):
            layer_svg.read_layer("a,b\n1,2\n")
        with self.assertRaisesRegex(layer_svg.LayerError, "no rows of rank 3"):
            layer_svg.read_layer(CSV, rank=3)
        with self.assertRaisesRegex(layer_svg.LayerError, "not positive"):
            layer_svg.read_layer(HEADER + "0,2,1,0,stream,1,1,1,1,1,1,1,1,1,1,1,1,d,g,c\n")


if __name__ == "__main__":
    unittest.main()
