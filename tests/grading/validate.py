#!/usr/bin/env python3
"""The grader's validation on a GPU machine: one command, a log folder, a summary at the end.

Usage: python3 tests/grading/validate.py LOGDIR [--build-dir DIR] [--jobs N] [--full-lesson NN]
                                           [--lessons FIRST-LAST]

Run it from the repository root of the course, on the H100, after the course is configured and
built. It proves, with the course's own lessons and the planted submissions of
tests/grading/planted/:

  1. every lesson's solution and every hand-out stub builds with the course's flags;
  2. every exercise region, cut alone, makes its lesson fail on two shapes, quickly (no hang);
  3. the course's solution of every lesson scores 100 (quick grades), and one lesson's full grade
     scores 100 in less than 10 minutes;
  4. the untouched hand-out of the last lesson scores 0 without hanging;
  5. each planted submission gets what its "expect" says (a hang killed and scored 0, a removed
     barrier losing points, an off-by-one in K, a submission right only on the public shapes,
     a cuBLAS call, a printing flood), within the grade's time bound; a planted file may shorten
     the per-run time limit ("run_timeout": the hang costs that much per killed run);
  6. no process of any run is left behind.

Everything is built once, in parallel, before the first run. Quick grades use fewer shapes, one
rerun, no sanitizers and one performance shape with fewer pairs (grade.py --quick); the full
grade runs everything. The hidden shapes come from a fixed validation secret (not the course's).

Exit status: 0 every check passed; 1 otherwise.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

GRADING_DIR = Path(__file__).resolve().parent
ROOT = GRADING_DIR.parents[1]
sys.path.insert(0, str(GRADING_DIR))

import build  # noqa: E402  (after the path is set)
import grade  # noqa: E402
import lessons  # noqa: E402
import regions  # noqa: E402
import shapes  # noqa: E402
from runs import InfrastructureError, living_members, run_limited  # noqa: E402

SECRET = b"validation secret of the course's grader (public: not the one students are graded with)"
PREBUILD_SECONDS = 1800
CUT_SHAPES = ("ragged_all", "tile_multiple")
# A lesson with a Stream-K workspace runs its Stream-K code only where the plan cuts tiles into
# parts: its cut regions are also run on a shape whose every tile is split.
STREAM_K_CUT_SHAPE = "few_tiles_long_k"
FULL_GRADE_LIMIT_SECONDS = 600
TARGET_SECONDS = 480


class Validation:
    def __init__(self, logs, build_dir, jobs, full_lesson, lesson_range=None):
        self.logs = logs
        self.tree = build.GradeTree(ROOT, build_dir)
        self.jobs = jobs
        self.full_lesson = full_lesson
        self.lesson_range = lesson_range  # (first, last) or None: every lesson
        self.checks = []  # (name, passed, detail, seconds)
        self.start = time.monotonic()
        self.public = shapes.public_shapes(ROOT)

    def check(self, name, passed, detail="", seconds=0.0):
        self.checks.append((name, bool(passed), detail, seconds))
        mark = "PASS" if passed else "FAIL"
        print(f"[{time.monotonic() - self.start:6.0f} s] {mark} {name}" + (f": {detail}" if detail else ""),
              flush=True)

    # ---- what gets graded ------------------------------------------------------------------

    def lessons(self):
        found = {}
        for number in sorted(lessons.lesson_folders(ROOT)):
            if self.lesson_range and not self.lesson_range[0] <= number <= self.lesson_range[1]:
                continue
            try:
                lesson = lessons.load(ROOT, number)
                text = (ROOT / lesson.kernel).read_text()
                found[number] = (lesson, text, regions.parse_regions(text, lesson.kernel))
            except (lessons.LessonError, regions.RegionError) as error:
                self.check(f"lesson {number:02d} follows the conventions", False, str(error))
        return found

    def planted(self, catalog):
        """{name: (lesson id, submission text, spec)} of tests/grading/planted/*.json."""
        submissions = {}
        condition = " || ".join(f"(m == {shape.m} && n == {shape.n} && k == {shape.k})"
                                for shape in self.public)
        for path in sorted((GRADING_DIR / "planted").glob("*.json")):
            spec = json.loads(path.read_text())
            if spec["lesson"] not in catalog:
                continue  # a lesson outside --lessons
            lesson, text, lesson_regions = catalog[spec["lesson"]]
            region = next(region for region in lesson_regions if region.name == spec["region"])
            body = region.body(text.split("\n"))
            if "body" in spec:
                body = [line.replace("{public_condition}", condition) for line in spec["body"]]
            for old, new in spec.get("replace", []):
                if not any(old in line for line in body):
                    raise ValueError(f"{path.name}: '{old}' is not in exercise {region.name}")
                body = [line.replace(old, new) for line in body]
            for pattern in spec.get("delete_lines_containing", []):
                if not any(pattern in line for line in body):
                    raise ValueError(f"{path.name}: no line of exercise {region.name} holds '{pattern}'")
                body = [line for line in body if pattern not in line]
            body = body + spec.get("append", [])
            submissions[path.stem] = (spec["lesson"], regions.replace_bodies(text, {region.name: body}), spec)
        return submissions

    def submission_file(self, name, text):
        path = self.logs / "submissions" / name / "kernel.cuh"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    # ---- 1: build everything at once -------------------------------------------------------

    def prebuild(self, catalog, programs):
        """Adds every submission's folder to the grading tree and builds them all in one go.
        `programs`: {name: (lesson id, kernel text, build its pair?, may fail to build?)}.
        Returns {name: Folder}; the grader finds the same folders again (same contents)."""
        started = time.monotonic()
        targets, folders, must_build = [], {}, []
        with self.tree.locked():
            for name, (number, text, with_pair, may_fail) in programs.items():
                lesson, course_text, lesson_regions = catalog[number]
                spliced = regions.splice(course_text, text, regions.cut(course_text)).text
                checks = sorted({region.attributes["host-check"] for region in lesson_regions
                                 if "host-check" in region.attributes})
                folder = folders[name] = self.tree.add(lesson, spliced, checks, with_pair=True)
                mine = [folder.target("lesson")] + [folder.target(f"check_{check}") for check in checks]
                mine += [folder.target("pair")] if with_pair else []
                targets += mine
                must_build += [] if may_fail else mine
            references = [f"lesson{number:02d}" for number in catalog]
            self.tree.configure()
            outcomes = self.tree.build(sorted(set(targets + references)), PREBUILD_SECONDS, self.jobs)
        failed = {target: outcome for target, outcome in outcomes.items() if not outcome.ok}
        (self.logs / "build_failures.log").write_text(
            "\n\n".join(f"== {target}\n{outcome.log}" for target, outcome in failed.items()))
        unexpected = sorted(set(failed) & set(must_build + references))
        self.check(f"everything builds ({len(outcomes)} targets, {self.jobs} jobs)", not unexpected,
                   "failed: " + ", ".join(unexpected) if unexpected else
                   f"{len(failed)} expected failure(s)", time.monotonic() - started)
        return folders

    # ---- 2: each region, cut alone, fails fast ---------------------------------------------

    def cuts_fail(self, catalog, cuts, folders):
        for name, (number, _, _) in cuts.items():
            executable = self.tree.executable(folders[name].target("lesson"))
            if not executable.is_file():
                continue
            started = time.monotonic()
            outcomes = []
            cut_shapes = CUT_SHAPES
            if ".zeroed_workspace = true" in catalog[number][1]:
                cut_shapes += (STREAM_K_CUT_SHAPE,)
            with grade.gpu_lock():
                for shape in [shape for shape in self.public if shape.name in cut_shapes]:
                    run = run_limited([executable, *shape.arguments(), *grade.CHECK_RUN],
                                      grade.DEFAULT_RUN_SECONDS, self.logs)
                    outcomes.append((shape.name, run.exit_code, run.timed_out))
            # 1: the check failed; 5: a CUDA error (the stub's trap); below 0: a signal. Exit 2-4
            # would say nothing about the region (no GPU, a bad shape). A Stream-K lesson's
            # regions run only on the Stream-K shape: there they must fail, elsewhere they may
            # pass; nothing may hang.
            def failed(code, timed_out):
                return code is not None and (code in (1, 5) or code < 0) and not timed_out
            judged = [outcome for outcome in outcomes
                      if STREAM_K_CUT_SHAPE not in cut_shapes or outcome[0] == STREAM_K_CUT_SHAPE]
            failed_fast = (all(failed(code, timed_out) for _, code, timed_out in judged)
                           and not any(timed_out for _, _, timed_out in outcomes))
            self.check(f"cut {name} fails its lesson", failed_fast,
                       ", ".join(f"{shape}: exit {code}{' (killed)' if timed_out else ''}"
                                 for shape, code, timed_out in outcomes), time.monotonic() - started)

    # ---- 3-5: grades -----------------------------------------------------------------------

    def grade(self, name, number, text, quick, run_seconds=grade.DEFAULT_RUN_SECONDS):
        started = time.monotonic()
        grader = grade.Grader(number, self.submission_file(name, text), self.logs / name,
                              self.tree.tree, quick=quick, secret=SECRET, run_seconds=run_seconds,
                              keep_build=True)
        grader.grade()
        return grader, time.monotonic() - started

    def part_score(self, grader, part):
        return sum(test.score for test in grader.report.tests_of(part))

    def expectations(self, grader, expect):
        """The ways a grade misses its planted expectation ([] if it meets it)."""
        report = grader.report
        outputs = "\n".join(test.output for test in report.tests)
        logs = "".join(path.read_text(errors="replace") for path in grader.runs_dir.glob("*.log"))
        misses = []
        if report.infrastructure_error:
            misses.append(f"infrastructure error: {report.infrastructure_error}")
        if "score_max" in expect and report.score > expect["score_max"]:
            misses.append(f"score {report.score} > {expect['score_max']}")
        if "score_below" in expect and report.score >= expect["score_below"]:
            misses.append(f"score {report.score} >= {expect['score_below']}")
        for part, (low, high) in expect.get("parts", {}).items():
            got = self.part_score(grader, part)
            if not low - 1e-6 <= got <= high + 1e-6:
                misses.append(f"{part} {got:g} outside [{low}, {high}]")
        if expect.get("hung") and "killed with its process group" not in outputs:
            misses.append("no run was killed as a hang")
        if grader.bound_seconds and time.monotonic() - grader.start > grader.bound_seconds:
            misses.append(f"took longer than its bound of {grader.bound_seconds:.0f} s")
        if expect.get("flagged") and not report.flags:
            misses.append("not flagged")
        if expect.get("build_failed") and not any(test.name.startswith("build") and not test.passed
                                                  for test in report.tests):
            misses.append("it built")
        if expect.get("output_capped") and "bytes of output not kept" not in logs:
            misses.append("no run's output had to be capped")
        return misses

    def valid_results_json(self, grader):
        try:
            results = json.loads((grader.results / "results.json").read_text())
            return isinstance(results.get("tests"), list)
        except (OSError, ValueError):
            return False

    def leftovers(self):
        """Processes still running a program of the grading tree."""
        tree = str(self.tree.tree)
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if tree in os.readlink(f"/proc/{entry}/exe") and living_members(int(entry)) != []:
                        found.append(int(entry))
                except OSError:
                    continue
        return found

    def run(self):
        catalog = self.lessons()
        solutions, cuts = {}, {}
        for number, (lesson, text, lesson_regions) in catalog.items():
            solutions[f"solution_{number:02d}"] = (number, text, None)  # timed against itself
            cuts[f"handout_{number:02d}"] = (number, regions.cut(text), None)
            if len(lesson_regions) > 1:
                for region in lesson_regions:
                    cuts[f"cut_{number:02d}_{region.name}"] = (number, regions.cut(text, [region.name]), None)
        planted = self.planted(catalog)
        programs = {name: (number, text, True, False) for name, (number, text, _) in solutions.items()}
        programs.update({name: (number, text, False, False) for name, (number, text, _) in cuts.items()})
        programs.update({name: (number, text, False, "build_failed" in spec["expect"])
                         for name, (number, text, spec) in planted.items()})
        folders = self.prebuild(catalog, programs)
        probe = run_limited([self.tree.executable(f"lesson{min(catalog):02d}"), "--m", "8", "--n", "8",
                             "--k", "8", *grade.CHECK_RUN], grade.CANARY_SECONDS, self.logs)
        if probe.exit_code == 2:
            raise InfrastructureError("this machine has no CUDA GPU: " + probe.last_lines(1))
        self.cuts_fail(catalog, cuts, folders)

        ratios = {}
        full = self.full_lesson if self.full_lesson in catalog else None
        for number in catalog:
            if number == full:
                continue
            grader, seconds = self.grade(f"solution_{number:02d}", number, catalog[number][1], quick=True)
            ratio = self.self_ratio(grader)
            ratios[number] = ratio
            self.check(f"solution of lesson {number:02d} scores 100 (quick)", grader.report.score >= 100 - 1e-6,
                       f"{grader.report.score:g} points, self ratio {ratio}" + self.problem(grader), seconds)
        if full is not None:
            grader, seconds = self.grade(f"solution_{full:02d}", full, catalog[full][1], quick=False)
            ratios[full] = self.self_ratio(grader)
            self.check(f"solution of lesson {full:02d} scores 100 (full grade) in under "
                       f"{FULL_GRADE_LIMIT_SECONDS} s", grader.report.score >= 100 - 1e-6 and
                       seconds < FULL_GRADE_LIMIT_SECONDS,
                       f"{grader.report.score:g} points in {seconds:.0f} s, self ratio {ratios[full]}"
                       + self.problem(grader), seconds)

        last = max(catalog)
        grader, seconds = self.grade(f"handout_{last:02d}", last, regions.cut(catalog[last][1]), quick=True)
        hung = any("killed" in test.output for test in grader.report.tests)
        self.check(f"untouched hand-out of lesson {last:02d} scores 0 without hanging",
                   grader.report.score == 0 and not hung and not grader.report.infrastructure_error,
                   f"{grader.report.score:g} points" + self.problem(grader), seconds)

        for name, (number, text, spec) in planted.items():
            grader, seconds = self.grade(name, number, text, quick=spec.get("mode") != "full",
                                         run_seconds=spec.get("run_timeout", grade.DEFAULT_RUN_SECONDS))
            misses = self.expectations(grader, spec["expect"])
            if not self.valid_results_json(grader):
                misses.append("results.json is not valid")
            self.check(f"planted {name}: {spec['what']}", not misses,
                       f"{grader.report.score:g} points" + ("; " + "; ".join(misses) if misses else ""),
                       seconds)

        left = self.leftovers()
        self.check("no process left behind", not left, f"still running: {left}" if left else "")
        with self.tree.locked():
            for folder in folders.values():
                self.tree.remove(folder)
        return ratios

    def problem(self, grader):
        report = grader.report
        if report.infrastructure_error:
            return f"; infrastructure error: {report.infrastructure_error.splitlines()[0]}"
        failed = [f"{test.part}/{test.name}" for test in report.tests if not test.passed and test.part != "info"]
        return "; failed: " + ", ".join(failed[:6]) if failed else ""

    def self_ratio(self, grader):
        """The solution against itself: the performance runs' ratios (calibration)."""
        ratios = [line.split(" x ")[0] for test in grader.report.tests_of("performance")
                  for line in [test.output] if " x the solution's speed" in line]
        return "/".join(ratios) or "n/a"


def main(argv=None):
    parser = argparse.ArgumentParser(description="Validate the grader on this GPU machine.")
    parser.add_argument("logs", type=Path, help="folder for the logs and the summary")
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build-grading")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--full-lesson", type=int, default=9,
                        help="the lesson graded in full (default 09; 0: none)")
    parser.add_argument("--lessons", default=None,
                        help="only these lessons and their planted submissions, e.g. 10-15 (the "
                             "whole validation takes longer than 10 minutes)")
    args = parser.parse_args(argv)
    lesson_range = None
    if args.lessons:
        first, _, last = args.lessons.partition("-")
        lesson_range = (int(first), int(last or first))
    args.logs.mkdir(parents=True, exist_ok=True)
    validation = Validation(args.logs.resolve(), args.build_dir.resolve(), args.jobs,
                            args.full_lesson, lesson_range)
    try:
        ratios = validation.run()
    except (InfrastructureError, ValueError) as error:
        validation.check("the validation ran to its end", False, str(error))
        ratios = {}
    total = time.monotonic() - validation.start
    failed = [check for check in validation.checks if not check[1]]
    lines = [f"{'PASS' if passed else 'FAIL'}  {seconds:6.0f} s  {name}" + (f"  ({detail})" if detail and not passed else "")
             for name, passed, detail, seconds in validation.checks]
    lines.append("")
    if ratios:
        lines.append("Calibration, each solution timed against itself (ratio per performance shape): "
                     + ", ".join(f"{number:02d} {ratio}" for number, ratio in sorted(ratios.items())))
    lines.append(f"Grader validation: {len(validation.checks) - len(failed)} passed, {len(failed)} failed, "
                 f"in {total:.0f} s (target {TARGET_SECONDS} s){'' if total <= TARGET_SECONDS else ' OVER TARGET'}; "
                 f"logs in {args.logs}")
    summary = "\n".join(lines)
    (args.logs / "summary.txt").write_text(summary + "\n")
    print("\n" + summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
