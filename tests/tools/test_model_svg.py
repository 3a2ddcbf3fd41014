"""profiles/model_svg.py: lesson 16's estimates against the oracle as a picture. The committed
pictures are checked with every other picture (test_pictures.py), and the committed points by
profiles.model_points_<gpu> (that they are what shape_model_report writes for the committed
oracles)."""
import sys
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))

import model_svg  # noqa: E402  (after the path is set)

SVG = "{http://www.w3.org/2000/svg}"
POINTS = """m,n,k,set,configuration,picked,estimate_us,measured_us
1024,1024,1024,fitted,a,no,20.0,21.0
1024,1024,1024,fitted,b,yes,15.0,14.0
8192,8192,8192,fitted,a,yes,1000.0,1100.0
"""


class Drawing(unittest.TestCase):
    def test_a_point_per_row_the_picks_on_top(self):
        points = model_svg.read_points(POINTS)
        self.assertEqual(points, [(20.0, 21.0, False), (15.0, 14.0, True), (1000.0, 1100.0, True)])
        root = ElementTree.fromstring(model_svg.render_svg(points, "title"))
        circles = list(root.iter(SVG + "circle"))[:3]  # the legend's two come after
        self.assertEqual([circle.get("fill") for circle in circles],
                         [model_svg.OTHER_COLOUR, model_svg.PICK_COLOUR, model_svg.PICK_COLOUR])
        # Log axes: 1000 us lies further right than 15 us, and higher (smaller y).
        small, large = circles[1], circles[2]
        self.assertGreater(float(large.get("cx")), float(small.get("cx")))
        self.assertLess(float(large.get("cy")), float(small.get("cy")))
        self.assertEqual(model_svg.decades(14.0, 1100.0), [10.0, 100.0, 1000.0, 10000.0])

    def test_a_file_that_is_not_points_is_one_line(self):
        with self.assertRaisesRegex(model_svg.PointsError, "needs the columns"):
            model_svg.read_points("a,b\n1,2\n")
        with self.assertRaisesRegex(model_svg.PointsError, "not positive"):
            model_svg.read_points("estimate_us,measured_us,picked\n0,1,no\n")


if __name__ == "__main__":
    unittest.main()
