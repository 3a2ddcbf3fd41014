"""tests/ptxas_guard.sh: the compile guard must fail a build in which ptxas ignored setmaxnreg
(C7508, reported only as "info"), and let the same kernel with launch bounds through.

Needs nvcc (the CUDA toolkit), not a GPU. The CMake test passes its path in NVCC.
"""
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
GUARD = REPOSITORY / "tests" / "ptxas_guard.sh"
SOURCE = REPOSITORY / "tests" / "tools" / "fixtures" / "setmaxnreg_without_launch_bounds.cu"


def compile_through_guard(*defines):
    """Compiles the fixture for sm_90a through the guard; returns (exit code, output)."""
    nvcc = os.environ.get("NVCC", "nvcc")
    with tempfile.TemporaryDirectory() as folder:
        command = [str(GUARD), nvcc, "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a",
                   f"-I{REPOSITORY}", *defines, "-c", str(SOURCE), "-o", str(Path(folder) / "k.o")]
        result = subprocess.run(command, capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


class PtxasGuardTest(unittest.TestCase):
    def test_ignored_setmaxnreg_fails_the_build(self):
        code, output = compile_through_guard()
        self.assertNotEqual(code, 0, output)
        self.assertIn("(C7508)", output)
        self.assertIn("error: ptxas ignored or repaired a Hopper instruction", output)

    def test_launch_bounds_make_it_pass(self):
        code, output = compile_through_guard("-DWITH_LAUNCH_BOUNDS")
        self.assertEqual(code, 0, output)
        self.assertNotIn("Potential Performance Loss", output)


if __name__ == "__main__":
    unittest.main()
