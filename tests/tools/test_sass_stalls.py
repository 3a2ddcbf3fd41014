"""profiles/sass_stalls.py: Nsight Compute's source page reduced to one row per instruction, and
the hottest loop summed by kind of instruction (lesson 18's README quotes it:
test_figure_sources.py checks that table against the committed file)."""
import io
import sys
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))

import sass_stalls  # noqa: E402  (after the path is set)

REASON_NAMES = [name for name, _ in sass_stalls.REASONS]


def export(rows):
    """An ncu source-page export of `rows`: (address, source, executed, samples, dispatch)."""
    header = (["Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed"]
              + REASON_NAMES)
    lines = ['"Kernel Name","void kernel(int)",', ",".join(f'"{h}"' for h in header)]
    for address, source, executed, samples, dispatch in rows:
        reasons = [str(dispatch)] + ["0"] * (len(REASON_NAMES) - 1)
        lines.append(",".join(f'"{v}"' for v in
                              [address, source, str(samples), str(executed)] + reasons))
    return "\n".join(lines) + "\n"


# A prologue, a loop of four instructions run 100 times (one a tensor-core instruction), a longer
# run executed fewer times, and a spin loop run more often than the loop but without an MMA.
KERNEL = export([
    ("0x1000", "      LDC R1, c[0x0][0x28]", 4, 1, 0),
    ("0x1010", "      FFMA R2, R3, R4, R2", 100, 30, 20),
    ("0x1020", "@!P0  FFMA R5, R6, R4, R5", 100, 10, 5),
    ("0x1030", "      QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR8], R24", 100, 8, 0),
    ("0x1040", "      IMAD.WIDE.U32 R6, R7, 0x4, R8", 100, 2, 1),
    ("0x1050", "      IMAD R9, R9, 0x8, RZ", 50, 1, 0),
    ("0x1060", "      HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], R24", 50, 1, 0),
    ("0x1070", "      SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR9], R2", 9000, 0, 0),
    ("0x1080", "  @!P0 BRA 0x1070", 9000, 0, 0),
])


class Reduce(unittest.TestCase):
    def test_one_row_per_instruction_at_its_offset(self):
        rows = sass_stalls.reduce_export(KERNEL)
        self.assertEqual([r["offset"] for r in rows][:3], ["0x0", "0x10", "0x20"])
        self.assertEqual(rows[2]["instruction"], "@!P0 FFMA R5, R6, R4, R5")
        self.assertEqual((rows[1]["executed"], rows[1]["samples"], rows[1]["stall_dispatch"]),
                         (100, 30, 20))

    def test_what_it_writes_it_reads_back(self):
        out = io.StringIO()
        sass_stalls.write_rows(sass_stalls.reduce_export(KERNEL), out)
        rows = sass_stalls.read_rows(out.getvalue())
        self.assertEqual(len(rows), 9)
        self.assertEqual(rows[3]["samples"], 8)

    def test_not_an_export(self):
        with self.assertRaisesRegex(sass_stalls.StallsError, "not an ncu source-page export"):
            sass_stalls.reduce_export("Address,Source\n0x0,NOP\n")

    def test_a_missing_column(self):
        text = KERNEL.replace('"stall_wait"', '"stall_waiting"')
        with self.assertRaisesRegex(sass_stalls.StallsError, "no column 'stall_wait'"):
            sass_stalls.reduce_export(text)


class Loop(unittest.TestCase):
    def setUp(self):
        self.rows = sass_stalls.reduce_export(KERNEL)

    def test_opcode(self):
        self.assertEqual(sass_stalls.opcode("@!P0 FFMA.FTZ R1, R2, R3, R1"), "FFMA")
        self.assertEqual(sass_stalls.opcode("@UP1 UIADD3 UR4, UR4, 0x1, URZ"), "UIADD3")
        self.assertEqual(sass_stalls.opcode("IMAD.WIDE.U32 R6, R7, 0x4, R8"), "IMAD")

    def test_the_hottest_loop_holds_a_tensor_core_instruction(self):
        loop = sass_stalls.hottest_loop(self.rows)
        self.assertEqual([r["offset"] for r in loop], ["0x10", "0x20", "0x30", "0x40"])

    def test_the_table_by_kind(self):
        lines, summary = sass_stalls.loop_table(self.rows)
        self.assertEqual(summary, {"instructions": 4, "passes": 100, "samples": 50,
                                   "kernel_samples": 53})
        self.assertEqual(lines[2], "| FFMA | 2 | 80.0% | dispatch 62% |")
        self.assertEqual(lines[3], "| QGMMA | 1 | 16.0% |  |")
        self.assertEqual(lines[4], "| IMAD | 1 | 4.0% | dispatch 50% |")

    def test_no_loop_with_a_tensor_core_instruction(self):
        rows = [r for r in self.rows if "GMMA" not in r["instruction"]]
        with self.assertRaisesRegex(sass_stalls.StallsError, "no run of instructions"):
            sass_stalls.loop_table(rows)

    def test_the_command_line(self):
        with tempfile.TemporaryDirectory() as folder:
            source, stalls = Path(folder) / "export.csv", Path(folder) / "stalls.csv"
            source.write_text(KERNEL)
            self.assertEqual(sass_stalls.main(["reduce", str(source), "--out", str(stalls)]), 0)
            self.assertEqual(sass_stalls.main(["loop", str(stalls)]), 0)
            self.assertEqual(sass_stalls.main(["loop", str(source)]), 1)


if __name__ == "__main__":
    unittest.main()
