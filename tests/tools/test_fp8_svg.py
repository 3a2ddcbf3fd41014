"""profiles/fp8_svg.py: lesson 18 against its three references on every shape of a sweep, as a
picture (the committed one is checked with every other picture: test_pictures.py)."""
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))

import fp8_svg  # noqa: E402  (after the path is set)

SVG = "{http://www.w3.org/2000/svg}"
CSV = ("m,n,k,configuration,vs_block_scaled,vs_per_tensor,vs_lesson16\n"
       "1024,1024,1024,128x128_c2,0.9,0.8,0.98\n"
       "8192,8192,1024,128x128_c2,0.88,0.78,1.19\n")


class Drawing(unittest.TestCase):
    def test_one_column_per_shape_in_the_files_order(self):
        points = fp8_svg.read_sweep(CSV)
        self.assertEqual([name for name, _ in points], ["1024^3", "8192 x 8192 x 1024"])
        self.assertEqual(points[1][1]["vs_lesson16"], 1.19)

    def test_slower_references_above_the_line_faster_below(self):
        root = ElementTree.fromstring(fp8_svg.render_svg(fp8_svg.read_sweep(CSV), "title"))
        line = next(line for line in root.iter(SVG + "line") if line.get("stroke-dasharray"))
        at_one = float(line.get("y1"))
        colour = {column: colour for column, _, colour in fp8_svg.SERIES}
        dots = [circle for circle in root.iter(SVG + "circle") if circle.get("r") == "4"]
        lesson16 = [dot for dot in dots if dot.get("fill") == colour["vs_lesson16"]][:2]
        block = [dot for dot in dots if dot.get("fill") == colour["vs_block_scaled"]][:2]
        self.assertLess(float(lesson16[1].get("cy")), at_one)   # 1.19: slower, above the line
        self.assertGreater(float(block[0].get("cy")), at_one)   # 0.9: faster, below it
        self.assertLess(float(block[0].get("cx")), float(block[1].get("cx")))

    def test_a_file_that_is_not_a_sweep_is_one_line(self):
        with self.assertRaisesRegex(fp8_svg.SweepError, "needs the columns"):
            fp8_svg.read_sweep("a,b\n1,2\n")
        with self.assertRaisesRegex(fp8_svg.SweepError, "not positive"):
            fp8_svg.read_sweep(CSV + "0,8,8,c,1,1,1\n")
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "s.csv"
            path.write_text("a,b\n1,2\n")
            self.assertEqual(fp8_svg.main([str(path), "--title", "t"]), 1)
            self.assertEqual(fp8_svg.main([str(path) + ".missing", "--title", "t"]), 2)


if __name__ == "__main__":
    unittest.main()
