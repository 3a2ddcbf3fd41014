"""profiles/roles_svg.py: the clock stamps of `make roles` as a Gantt chart of one launch, block by
block and role by role."""
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))

import roles_svg  # noqa: E402  (after the path is set)

SVG = "{http://www.w3.org/2000/svg}"

HEADER = ("gpu,date,commit,m,n,k,configuration,chosen_by,blocks,run_us,pairs,lesson_median_us,"
          "cublas_median_us,ratio,sm_mhz_median,block,role,item,event,t_us\n")
RUN = '"NVIDIA H200",2026-11-30,abc1234,1024,1024,1024,64x128_c2_sk8,model,2,8.5,100,8.4,7.1,0.85,1980,'


def row(block, role, item, event, t):
    return f'{RUN}{block},"{role}",{item},"{event}",{t}\n'


ROLES = HEADER + "".join([
    row(0, "producer", "", "started", 0), row(0, "producer", "", "set up", 0.5),
    row(0, "producer", "", "first load", 0.6), row(0, "producer", "", "first posted", 1.0),
    row(0, "math 0", 0, "received", 1.1), row(0, "math 0", 0, "first slice", 2.0),
    row(0, "math 0", 0, "MMAs complete", 6.0),
    row(0, "math 0", 0, "stored", 6.8),
    row(0, "producer", "", "last load", 5.0), row(0, "math 0", "", "finished", 7.4),
    # Block 1: a part of a cut tile, which stores nothing.
    row(1, "producer", "", "started", 0.2), row(1, "producer", "", "set up", 0.6),
    row(1, "producer", "", "first load", 1.2), row(1, "producer", "", "first posted", 1.9),
    row(1, "math 0", 0, "received", 2.0), row(1, "math 0", 0, "first slice", 2.5),
    row(1, "math 0", 0, "MMAs complete", 6.5),
    row(1, "producer", "", "last load", 5.5), row(1, "math 0", "", "finished", 6.6),
]) + '"NVIDIA H200",2026-11-30,abc1234,64,4096,4096,64x64_c1_split8,model,2,20,100,20,19,0.95,1980,0,"producer",,"started",0\n'


class Reading(unittest.TestCase):
    def test_each_block_gets_its_phases_in_its_lanes(self):
        blocks = roles_svg.read_roles(ROLES, (1024, 1024, 1024), "64x128_c2_sk8")
        self.assertEqual([block.number for block in blocks], [0, 1])
        first = blocks[0]
        self.assertEqual([(bar.phase, bar.start, bar.end) for bar in first.lanes["producer"]],
                         [("set-up", 0, 0.5), ("first item worked out and posted", 0.5, 1.0),
                          ("loads", 1.0, 5.0)])
        self.assertEqual([(bar.phase, bar.start, bar.end) for bar in first.lanes["math 0"]],
                         [("waiting for the first slice", 1.1, 2.0), ("MMAs", 2.0, 6.0),
                          ("fixup and epilogue", 6.0, 6.8),
                          ("stores draining", 6.8, 7.4)])
        self.assertEqual(first.lanes["math 1"], [])
        # A part that stores nothing has its MMAs and no epilogue.
        self.assertEqual([bar.phase for bar in blocks[1].lanes["math 0"]],
                         ["waiting for the first slice", "MMAs"])

    def test_a_launch_the_file_lacks_is_one_line(self):
        with self.assertRaisesRegex(roles_svg.RolesError, "no rows of 1024x1024x1024 with nope"):
            roles_svg.read_roles(ROLES, (1024, 1024, 1024), "nope")
        with self.assertRaisesRegex(roles_svg.RolesError, "needs the columns"):
            roles_svg.read_roles("a,b\n1,2\n", (1, 8, 8), "x")
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "roles.csv"
            path.write_text(ROLES)
            common = ["--title", "t", "--out", str(Path(scratch) / "r.svg")]
            self.assertEqual(roles_svg.main([str(path), "--shape", "8x8x8", "--config", "x"]
                                            + common), 1)
            self.assertEqual(roles_svg.main([str(path) + ".missing", "--shape", "8x8x8",
                                             "--config", "x"] + common), 2)
            self.assertEqual(roles_svg.main([str(path), "--shape", "1024x1024x1024", "--config",
                                             "64x128_c2_sk8"] + common), 0)
            self.assertTrue((Path(scratch) / "r.svg").exists())


class Drawing(unittest.TestCase):
    def test_bars_are_placed_by_their_times_inside_the_plot(self):
        blocks = roles_svg.read_roles(ROLES, (1024, 1024, 1024), "64x128_c2_sk8")
        root = ElementTree.fromstring(roles_svg.render_svg(blocks, "a title"))
        bars = [rect for rect in root.iter(SVG + "rect") if rect.find(SVG + "title") is not None]
        self.assertEqual(len(bars), 3 + 4 + 3 + 2)  # each block's producer, math 0
        by_title = {rect.find(SVG + "title").text: rect for rect in bars}
        mmas = by_title["block 0, math 0: MMAs, 2 .. 6 us"]
        epilogue = by_title["block 0, math 0: fixup and epilogue, 6 .. 6.8 us"]
        self.assertAlmostEqual(float(epilogue.get("x")),
                               float(mmas.get("x")) + float(mmas.get("width")), places=1)
        self.assertAlmostEqual(float(epilogue.get("width")) / float(mmas.get("width")), 0.8 / 4.0,
                               places=2)
        for rect in bars:
            self.assertGreaterEqual(float(rect.get("x")), roles_svg.LEFT - 0.1)
            self.assertLessEqual(float(rect.get("x")) + float(rect.get("width")),
                                 roles_svg.WIDTH - roles_svg.RIGHT + 0.1)
        texts = [text.text for text in root.iter(SVG + "text")]
        self.assertIn("a title", texts)
        self.assertTrue({"MMAs", "loads", "stores draining"} <= set(texts))


if __name__ == "__main__":
    unittest.main()
