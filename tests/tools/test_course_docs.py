"""The course's own metric lists and the page that explains them agree.

docs/profiling.md has one table row per metric of profiles/metrics.csv: its label, better and
why columns, and the lessons that profiles/focus.csv says move it; its ncu command line shows the
metrics marked collected=explicit. Edit the three together.
"""
import sys
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))

import check_metrics  # noqa: E402  (after the path is set)
import compare  # noqa: E402

PAGE = REPOSITORY / "docs" / "profiling.md"


TABLE_HEADER = "| metric | in plain words | better | lessons that move it | what it tells you |"


def metric_rows():
    """{metric: [label, better, lessons, why]} from the page's metric table."""
    lines = PAGE.read_text().splitlines()
    rows = {}
    for line in lines[lines.index(TABLE_HEADER) + 2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        rows[cells[0].strip("`")] = cells[1:]
    return rows


class CourseDocs(unittest.TestCase):
    def setUp(self):
        self.curated = compare.load_curated_metrics()
        self.focus = compare.load_focus(curated=self.curated)

    def test_the_page_lists_exactly_the_curated_metrics(self):
        self.assertEqual(list(metric_rows()), [metric.name for metric in self.curated])

    def test_each_row_agrees_with_the_lists(self):
        rows = metric_rows()
        for metric in self.curated:
            lessons = ", ".join(lesson for lesson, names in sorted(self.focus.items())
                                if metric.name in names) or "-"
            self.assertEqual(rows[metric.name], [metric.label, metric.better, lessons, metric.why],
                             f"docs/profiling.md disagrees with the lists on {metric.name}")

    def test_the_page_names_the_explicit_metrics(self):
        # The ncu command shown on the page passes exactly the explicit metrics to --metrics.
        explicit = [metric.name for metric in self.curated if metric.collected == "explicit"]
        text = PAGE.read_text()
        if explicit:
            self.assertIn(f"--metrics {','.join(explicit)} \\\n", text)
        else:
            self.assertNotIn("    --metrics ", text)

    def test_suffixes_are_well_formed(self):
        # Whatever a metric's type, each suffix must be one ncu has; launch statistics take none.
        allowed = (check_metrics.ROLLUPS | check_metrics.COUNTER_SUBMETRICS |
                   check_metrics.RATIO_SUBMETRICS)
        for metric in self.curated:
            base, *suffixes = metric.name.split(".")
            if base.startswith("launch__"):
                self.assertIn(base, check_metrics.LAUNCH_METRICS)
                self.assertEqual(suffixes, [], metric.name)
            else:
                self.assertTrue(set(suffixes) <= allowed, metric.name)


if __name__ == "__main__":
    unittest.main()
