"""Exercise regions (tests/grading/regions.py): parsing the markers, cutting and splicing, and the
validator that keeps a submission's code inside its regions."""
import sys
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "tests" / "grading"))

import lessons  # noqa: E402  (after the path is set)
import regions  # noqa: E402

KERNEL = """#pragma once
#include "common/gemm.hpp"
#include "common/lesson.hpp"

namespace lesson42 {
__device__ int scale(int x) {
  // BEGIN EXERCISE(twice, returns): return twice x
  //   (the task goes on here)
  // The answer: a shift would do too.
  return 2 * x;
  // END EXERCISE
}
__global__ void kernel(float* out, int n) {
  // BEGIN EXERCISE(sum, declares=total): add up the first n integers
  float total = 0.0f;
  for (int i = 0; i < n; ++i) total += float(i);
  // END EXERCISE
  out[0] = total;
}
}  // namespace lesson42
"""


def course_kernels():
    """{number: kernel text} of the course's lessons 01-09."""
    folders = lessons.lesson_folders(REPOSITORY)
    return {number: (REPOSITORY / folder / "kernel.cuh").read_text()
            for number, folder in folders.items() if number <= 9}


def limits_of(body):
    return regions.region_limits(body)


class Markers(unittest.TestCase):
    def test_a_kernel_with_two_regions(self):
        found = regions.parse_regions(KERNEL)
        self.assertEqual([region.name for region in found], ["twice", "sum"])
        self.assertEqual(found[0].task, "return twice x (the task goes on here)")
        self.assertEqual(found[0].attributes, {"returns": True})
        self.assertEqual(found[1].attributes, {"declares": ["total"]})
        lines = KERNEL.split("\n")
        self.assertEqual(found[0].body(lines), ["  // The answer: a shift would do too.", "  return 2 * x;"])

    def test_every_lesson_has_well_formed_regions(self):
        for number, text in course_kernels().items():
            with self.subTest(lesson=number):
                self.assertTrue(regions.parse_regions(text), f"lesson {number:02d} has no region")

    def test_malformed_markers_are_errors(self):
        cases = {
            "no END": "// BEGIN EXERCISE(a): x\nint y;\n",
            "END alone": "int y;\n// END EXERCISE\n",
            "nested": "// BEGIN EXERCISE(a): x\n// BEGIN EXERCISE(b): y\n// END EXERCISE\n",
            "bad name": "// BEGIN EXERCISE(Bad-Name): x\n// END EXERCISE\n",
            "unknown attribute": "// BEGIN EXERCISE(a, keeps=1): x\n// END EXERCISE\n",
            "twice the same name": "// BEGIN EXERCISE(a): x\n// END EXERCISE\n// BEGIN EXERCISE(a): y\n// END EXERCISE\n",
            "typo in a marker": "// BEGIN EXERCISE a: x\n// END EXERCISE\n",
        }
        for what, text in cases.items():
            with self.subTest(what), self.assertRaises(regions.RegionError):
                regions.parse_regions(text)


class CutAndSplice(unittest.TestCase):
    def test_the_stub_keeps_markers_declarations_and_returns(self):
        handout = regions.cut(KERNEL)
        self.assertIn('#include "common/exercise.hpp"', handout)
        self.assertNotIn("2 * x", handout)
        self.assertNotIn("total += float(i)", handout)
        self.assertIn("  //   (the task goes on here)", handout)
        self.assertIn("  float total{};", handout)
        self.assertIn("  return {};", handout)
        self.assertEqual(handout.count(regions.STUB_CALL), 2)
        self.assertEqual([region.name for region in regions.parse_regions(handout)], ["twice", "sum"])

    def test_a_stub_reads_what_the_region_uses(self):
        kernel = ('#include "common/gemm.hpp"\n'
                  "float scaled(float product, float bias) {\n"
                  "  // BEGIN EXERCISE(scale, returns, uses=product bias): the scaled value\n"
                  "  return 2 * product + bias;\n"
                  "  // END EXERCISE\n}\n")
        handout = regions.cut(kernel)
        self.assertIn("  gemm::exercise::unwritten();\n  return product + bias;", handout)
        self.assertEqual(regions.parse_regions(kernel)[0].attributes["uses"], ["product", "bias"])

    def test_cutting_one_region_leaves_the_other(self):
        handout = regions.cut(KERNEL, only=["sum"])
        self.assertIn("return 2 * x;", handout)
        self.assertNotIn("total += float(i)", handout)
        with self.assertRaises(regions.RegionError):
            regions.cut(KERNEL, only=["missing"])

    def test_resplicing_the_solution_into_the_handout_gives_the_course_file(self):
        for number, text in course_kernels().items():
            with self.subTest(lesson=number):
                handout = regions.cut(text)
                lines = text.split("\n")
                solution = {region.name: region.body(lines) for region in regions.parse_regions(text)}
                # A student who writes the solution back into the hand-out submits this:
                resubmitted = regions.replace_bodies(handout, solution)
                spliced = regions.splice(text, resubmitted, handout)
                self.assertEqual(spliced.text, text)
                self.assertEqual(spliced.outside_changes, [])
                # ... and the hand-out differs from the course only inside the regions and by
                # the stub's include.
                self.assertEqual(resubmitted.replace(regions.EXERCISE_INCLUDE + "\n", "", 1), text)

    def test_an_untouched_handout_splices_to_the_stubs(self):
        handout = regions.cut(KERNEL)
        spliced = regions.splice(KERNEL, handout, handout)
        self.assertEqual(spliced.text, handout)

    def test_changes_outside_the_regions_are_listed_and_ignored(self):
        handout = regions.cut(KERNEL)
        edited = handout.replace("out[0] = total;", "out[0] = 42.0f;")
        spliced = regions.splice(KERNEL, edited, handout)
        self.assertIn("out[0] = total;", spliced.text)
        self.assertTrue(any("out[0] = 42.0f;" in line for line in spliced.outside_changes))

    def test_regions_must_match_by_name_and_order(self):
        swapped = KERNEL.replace("EXERCISE(twice, returns)", "EXERCISE(other)")
        with self.assertRaises(regions.RegionError):
            regions.splice(KERNEL, swapped, regions.cut(KERNEL))
        with self.assertRaises(regions.RegionError):
            regions.splice(KERNEL, "int nothing;\n", regions.cut(KERNEL))

    def test_solution_lines_leave_out_what_the_file_repeats(self):
        text = KERNEL.replace("  out[0] = total;", "  out[0] = total;\n  for (int i = 0; i < n; ++i) total += float(i);")
        found = [line for _, line in regions.solution_lines(text)]
        self.assertNotIn("for (int i = 0; i < n; ++i) total += float(i);", found)
        self.assertIn("for (int i = 0; i < n; ++i) total += float(i);",
                      [line for _, line in regions.solution_lines(KERNEL)])


    def test_lesson_17_fills_the_two_hooks_of_its_launch_policy(self):
        folder = lessons.lesson_folders(REPOSITORY)[17]
        text = (REPOSITORY / folder / "kernel.cuh").read_text()
        self.assertEqual([region.name for region in regions.parse_regions(text)],
                         ["wait_for_prerequisite", "let_dependents_start"])
        self.assertEqual(regions.solution_lines(text),
                         [("wait_for_prerequisite", "gemm::ptx::wait_for_prerequisite_grids();"),
                          ("let_dependents_start", "gemm::ptx::launch_dependent_grids();")])
        handout = regions.cut(text)
        self.assertNotIn("wait_for_prerequisite_grids();", handout)
        self.assertNotIn("launch_dependent_grids();", handout)
        self.assertIn("__device__ static void before_first_load() {", handout)
        self.assertIn("__device__ static void after_last_load() {", handout)


class Validator(unittest.TestCase):
    REFERENCE = ["  float total = 0.0f;", "  for (int i = 0; i < n; ++i) total += float(i);"]

    def problems(self, *body, reference=None):
        return regions.validate_body("sum", list(body), limits_of(reference or self.REFERENCE))

    def test_plain_code_passes(self):
        self.assertEqual(self.problems(
            "  float total = 0.0f;",
            "#pragma unroll",
            "  for (int i = 0; i < n; ++i) { total += float(i); }",
            "  const char* text = \"} not a brace {\"; char brace = '}';",
            "  /* a } in a comment */ int big = 1'000'000;",
            "#pragma unroll 4",
            "  // a comment with a { brace"), [])

    def test_each_escape_is_rejected(self):
        escapes = {
            "closes the function": ["  }", "  __global__ void evil() {"],
            "include": ['#include "other.hpp"'],
            "define": ["#define n 0"],
            "directive after a comment": ["  /* x */ #define n 0"],
            "_Pragma": ['  _Pragma("unroll")'],
            "extern": ["  extern int sneaky;"],
            "namespace": ["  namespace x = gemm;"],
            "__host__ lambda": ["  auto f = [] __host__ () {};"],
            "__global__": ["  __global__ void f();"],
            "asm not in the solution": ['  asm volatile("trap;");'],
            "static not in the solution": ["  static int counter;"],
            "__shared__ not in the solution": ["  __shared__ float extra[32];"],
            "digraph brace": ["  %>"],
            "digraph directive": ["%:include <cstdio>"],
            "trigraph": ["  int x = 1; ??/"],
            "raw string": ['  const char* s = R"(raw)";'],
            "unterminated string": ['  const char* s = "open;'],
            "unterminated block comment": ["  /* never closed"],
            "line continuation": ["  int x = 1; \\", "  int y = 2;"],
            "comment continuation": ["  // a comment \\", "  int y = 2;"],
            "continuation before spaces": ["  int x = 1; \\   ", "  int y = 2;"],
            "continuation in a string": ['  const char* s = "abc\\', '  def";'],
            "open bracket": ["  for (int i = 0; i < n; ++i) {"],
            "launch bounds": ["  __launch_bounds__(128) int x;"],
            "too long": ["  total += 1.0f;"] * 200,
        }
        for what, body in escapes.items():
            with self.subTest(what):
                self.assertTrue(self.problems(*body), f"'{what}' was accepted")

    def test_guarded_words_are_allowed_where_the_solution_uses_them(self):
        reference = ['  asm volatile("mov.u32 %0, 1;" : "=r"(x));']
        self.assertEqual(self.problems('  asm volatile("mov.u32 %0, 2;" : "=r"(x));', reference=reference), [])

    def test_library_names_are_flagged_but_not_comments(self):
        self.assertEqual(regions.flagged_words(["  cublasHandle_t h; cublasCreate(&h);"]),
                         ["cublasCreate", "cublasHandle_t"])
        self.assertEqual(regions.flagged_words(["  // not cublasCreate: a comment", '  puts("dlopen");']), [])


if __name__ == "__main__":
    unittest.main()
