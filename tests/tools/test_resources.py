"""profiles/resources.py: ptxas's report of each lesson kernel read into a table, and its CSV."""
import csv
import sys
import tempfile
import unittest
import unittest.mock
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))

import resources  # noqa: E402  (after the path is set)

LOG = """\
ptxas info    : Compiling entry function '_ZN8lesson0611gemm_kernelEv' for 'sm_90a'
ptxas info    : Function properties for _ZN8lesson0611gemm_kernelEv
    96 bytes stack frame, 96 bytes spill stores, 172 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 400 bytes cmem[0]
ptxas info    : Compiling entry function '_ZN4gemm12_GLOBAL__N_16helperEv' for 'sm_90a'
ptxas info    : Used 16 registers, 1024 bytes smem
"""


class Resources(unittest.TestCase):
    def test_parse(self):
        kernels = resources.parse(LOG)
        self.assertEqual([(k["registers"], k["stack"], k["spill_stores"], k["spill_loads"],
                           k["smem"]) for k in kernels],
                         [(255, 96, 96, 172, 0), (16, 0, 0, 0, 1024)])

    def test_csv_has_the_lesson_kernels_only(self):
        with tempfile.TemporaryDirectory() as folder:
            log, table = Path(folder) / "ptxas.log", Path(folder) / "table.csv"
            log.write_text(LOG)
            with unittest.mock.patch("builtins.print"):
                resources.main([str(log), "--csv", str(table), "--commit", "abc1234"])
            rows = list(csv.DictReader(table.open()))
        self.assertEqual(len(rows), 1)
        self.assertEqual((rows[0]["registers"], rows[0]["spill_load_bytes"]), ("255", "172"))
        self.assertTrue(rows[0]["kernel"].startswith("lesson06::gemm_kernel"))
        self.assertEqual(rows[0]["commit"], "abc1234")
        self.assertTrue({"nvcc", "date"} <= set(rows[0]))


if __name__ == "__main__":
    unittest.main()
