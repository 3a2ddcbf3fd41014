#!/usr/bin/env python3
"""The grader's validation on a GPU machine, in parts of under 10 minutes each (docs/grading.md).

Usage: python3 tests/grading/validate.py LOGDIR --lessons FIRST-LAST [--build-only]
                                        [--kinds solution,empty,stub,planted] [--margin POINTS]
                                        [--grade-jobs N] [--parallel-grades N] [--build-jobs N]
                                        [--build-dir DIR] [--keep-builds] [--regions NAMES]
       python3 tests/grading/validate.py --tables LOGDIR/validation.json [MORE.json ...]

Run it from the repository root of the course, on the H100. For the lessons in the range it
proves, with the course's own lessons and the planted wrong answers of tests/grading/planted/:

  1. everything builds with the course's flags, once, in parallel, before the first run
     (--build-only stops there: it needs no GPU, and the runs of the next call reuse the builds);
  2. every lesson's solution gets a full grade (secret, every shape, sanitizers, performance with
     20 pairs on both performance shapes) of 100; its seconds and the self ratio of each
     performance shape (the solution timed against itself: the calibration) are recorded;
  3. every exercise region, in three kinds of variant, scores clearly below the solution: at
     least --margin points (default 10) below 100, and whatever its planted file expects:
       empty    the region's body removed (markers and task lines left; one that does not build
                scores 0 at the build step),
       stub     the hand-out's stub in that region only (regions.cut), which must fail fast,
       planted  each wrong answer of tests/grading/planted/*.json for that region;
     each is graded quickly first and, when the quick grade cannot tell (races show only under
     the sanitizers of a full grade), again in full (an empty region that did not build is
     recorded with 0 points, mode "build", without a grade); a region with no planted wrong
     answer fails the validation;
  4. the untouched hand-out of the last lesson in the range scores 0 without hanging;
  5. no process of any run is left behind.

--regions a,b grades only the variants of those regions (and the solutions), and not the
hand-out: a part of the validation for the regions a change touched.

Correctness runs share the GPU: each grade runs --grade-jobs of them at once (grade.py --jobs),
and --parallel-grades grades run at once; performance always runs alone (the GPU lock's exclusive
side, grade.gpu_lock). The hidden shapes come from a fixed validation secret (not the course's).

Output: a line per check as it finishes, a summary at the end, LOGDIR/summary.txt, and
LOGDIR/validation.json (per lesson: the solution's score, seconds and self ratios; per variant:
lesson, region, kind, mode, score, seconds, passed). --tables turns validation.json files into
the Markdown tables of docs/grading.md.

Exit status: 0 every check passed; 1 otherwise; 2 bad usage.
"""
import argparse
import concurrent.futures
import dataclasses
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

GRADING_DIR = Path(__file__).resolve().parent
ROOT = GRADING_DIR.parents[1]
sys.path.insert(0, str(GRADING_DIR))

import build  # noqa: E402  (after the path is set)
import grade  # noqa: E402
import homework  # noqa: E402
import lessons  # noqa: E402
import regions  # noqa: E402
import shapes  # noqa: E402
from runs import InfrastructureError, living_members, run_limited  # noqa: E402

SECRET = b"validation secret of the course's grader (public: not the one students are graded with)"
PREBUILD_SECONDS = 1800
CLEARLY_BELOW_POINTS = 10   # a variant must score at least this much below the solution's 100
PART_LIMIT_SECONDS = 600    # each part of the validation must finish within this
# Measured on the H100 (2026-11-24): with 3 grades at once of 4 runs each, over lessons 01-04, a
# killed run's process survived its SIGKILL and the GPU was lost to every later process until the
# machine was replaced. With 2 grades of 2-3 runs (lessons 09-15) or 1 grade of 3 runs (lessons
# 04-08) nothing of the kind happened. Hence the cautious defaults.
DEFAULT_GRADE_JOBS = 3
DEFAULT_PARALLEL_GRADES = 1
KINDS = ("solution", "empty", "stub", "planted")
PLANTED_DIR = GRADING_DIR / "planted"
FULL = "full"
QUICK = "quick"


class PlantedError(ValueError):
    """A planted file that does not fit the lesson it names; the message says how."""


@dataclasses.dataclass
class Variant:
    """One submission the validation grades."""
    name: str                 # its folder under LOGDIR/grades and submissions
    lesson: int
    region: object            # the region's name; None for a solution or a whole hand-out
    kind: str                 # solution, empty, stub, planted, handout
    text: str                 # the whole kernel.cuh submitted
    planted: str = ""         # the planted file's name (kind planted)
    what: str = ""
    modes: tuple = (QUICK, FULL)  # graded in the first; in the next while the grade misses
    expect: dict = dataclasses.field(default_factory=dict)
    run_seconds: float = grade.DEFAULT_RUN_SECONDS
    may_fail_to_build: bool = False

    @property
    def label(self):
        return self.planted if self.kind == "planted" else self.kind


@dataclasses.dataclass
class Attempt:
    """One grade of a variant."""
    mode: str
    score: float
    seconds: float
    misses: list              # how the grade missed what the variant must show ([]: it did not)
    infrastructure_error: object = None
    ratios: dict = dataclasses.field(default_factory=dict)
    gpu: str = ""


@dataclasses.dataclass
class Outcome:
    variant: Variant
    attempts: list

    @property
    def final(self):
        return self.attempts[-1]

    @property
    def passed(self):
        return not self.final.misses


# ---- The variants ---------------------------------------------------------------------------------

def load_planted(directory=PLANTED_DIR):
    """{name: spec} of the planted files (lesson, region, what, an edit, mode, expect)."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(Path(directory).glob("*.json"))}


def public_condition(public):
    """C++ that is true exactly on the public shapes (planted bodies use it as {public_condition})."""
    return " || ".join(f"(m == {shape.m} && n == {shape.n} && k == {shape.k})" for shape in public)


def apply_planted(name, spec, text, lesson_regions, public):
    """The lesson's kernel with the planted edit in its region: the region's body replaced
    ("body"), strings replaced in it ("replace"), lines holding a string deleted
    ("delete_lines_containing"), then lines appended ("append")."""
    region = next((region for region in lesson_regions if region.name == spec["region"]), None)
    if region is None:
        raise PlantedError(f"{name}: lesson {spec['lesson']:02d} has no exercise '{spec['region']}'")
    body = region.body(text.split("\n"))
    if "body" in spec:
        body = [line.replace("{public_condition}", public_condition(public)) for line in spec["body"]]
    for old, new in spec.get("replace", []):
        if not any(old in line for line in body):
            raise PlantedError(f"{name}: '{old}' is not in exercise {region.name}")
        body = [line.replace(old, new) for line in body]
    for pattern in spec.get("delete_lines_containing", []):
        if not any(pattern in line for line in body):
            raise PlantedError(f"{name}: no line of exercise {region.name} holds '{pattern}'")
        body = [line for line in body if pattern not in line]
    body = body + spec.get("append", [])
    return regions.replace_bodies(text, {region.name: body})


def empty_region(text, region_name):
    """The kernel with one region's body removed: only its markers and task lines are left."""
    return regions.replace_bodies(text, {region_name: []})


def lesson_variants(number, text, lesson_regions, planted, public, kinds=KINDS):
    """The variants of one lesson: its solution, and for each region the empty, stub and planted
    ones (those of `kinds`)."""
    variants = []
    if "solution" in kinds:
        variants.append(Variant(f"{number:02d}_solution", number, None, "solution", text,
                                what="the course's solution", modes=(FULL,)))
    for region in lesson_regions:
        stem = f"{number:02d}_{region.name}"
        if "empty" in kinds:
            variants.append(Variant(f"{stem}_empty", number, region.name, "empty",
                                    empty_region(text, region.name), what="the region's body empty",
                                    may_fail_to_build=True))
        if "stub" in kinds:
            variants.append(Variant(f"{stem}_stub", number, region.name, "stub",
                                    regions.cut(text, [region.name]), what="the hand-out's stub",
                                    expect={"no_hang": True}))
        if "planted" not in kinds:
            continue
        for name, spec in planted.items():
            if spec["lesson"] == number and spec["region"] == region.name:
                modes = (FULL,) if spec.get("mode") == FULL else (QUICK, FULL)
                variants.append(Variant(
                    f"{stem}_{name}", number, region.name, "planted",
                    apply_planted(name, spec, text, lesson_regions, public), planted=name,
                    what=spec["what"], modes=modes, expect=spec["expect"],
                    run_seconds=spec.get("run_timeout", grade.DEFAULT_RUN_SECONDS),
                    may_fail_to_build=bool(spec["expect"].get("build_failed"))))
    return variants


def missing_planted(catalog, planted):
    """'NN region' for every region of the catalog's lessons that no planted file covers."""
    covered = {(spec["lesson"], spec["region"]) for spec in planted.values()}
    return [f"{number:02d} {region.name}" for number, (_, _, lesson_regions) in sorted(catalog.items())
            for region in lesson_regions if (number, region.name) not in covered]


# ---- Judging a grade ------------------------------------------------------------------------------

def clearly_below(score, margin):
    """'' when the score is at least `margin` below 100, else why not."""
    if score <= 100 - margin + 1e-6:
        return ""
    return f"score {score:g} is not clearly below the solution's 100 (at most {100 - margin:g})"


def grade_with_escalation(variant, grade_once, margin):
    """Grades the variant in its first mode and, while a grade misses (its score not clearly
    below 100, or its expectations unmet), in the next: a quick grade runs no sanitizer and few
    shapes, so it cannot see every wrong answer. `grade_once(variant, mode)` returns an Attempt
    whose misses are the expectations it did not meet. An infrastructure error ends it."""
    attempts = []
    for mode in variant.modes:
        attempt = grade_once(variant, mode)
        below = clearly_below(attempt.score, margin)
        if below:
            attempt.misses.append(below)
        attempts.append(attempt)
        if not attempt.misses or attempt.infrastructure_error:
            break
    return Outcome(variant, attempts)


def expectation_misses(report, expect, outputs, logs, elapsed, bound_seconds):
    """The ways a graded report misses the expectations of a variant ([] if it meets them)."""
    misses = []
    if report.infrastructure_error:
        misses.append(f"infrastructure error: {report.infrastructure_error.splitlines()[0]}")
    if "score_max" in expect and report.score > expect["score_max"]:
        misses.append(f"score {report.score:g} > {expect['score_max']}")
    if "score_below" in expect and report.score >= expect["score_below"]:
        misses.append(f"score {report.score:g} >= {expect['score_below']}")
    for part, (low, high) in expect.get("parts", {}).items():
        tests = report.tests_of(part)
        got = sum(test.score for test in tests)
        # Each test's score is rounded to 4 decimals (report.Report): their sum may be off by
        # half a unit of the last decimal per test (20 points over 23 shapes add up to 20.0008).
        rounding = 0.5e-4 * len(tests) + 1e-9
        if not low - rounding <= got <= high + rounding:
            misses.append(f"{part} {got:g} outside [{low}, {high}]")
    hung = "killed with its process group" in outputs
    if expect.get("hung") and not hung:
        misses.append("no run was killed as a hang")
    if expect.get("no_hang") and hung:
        misses.append("a run hung until it was killed: the stub must fail fast")
    if bound_seconds and elapsed > bound_seconds:
        misses.append(f"took {elapsed:.0f} s, longer than its bound of {bound_seconds:.0f} s")
    if expect.get("flagged") and not report.flags:
        misses.append("not flagged")
    if expect.get("build_failed") and not any(test.name.startswith("build") and not test.passed
                                              for test in report.tests):
        misses.append("it built")
    if expect.get("output_capped") and "bytes of output not kept" not in logs:
        misses.append("no run's output had to be capped")
    return misses


# ---- The validation --------------------------------------------------------------------------------

class Validation:
    def __init__(self, logs, build_dir, lesson_range, kinds=KINDS, margin=CLEARLY_BELOW_POINTS,
                 grade_jobs=DEFAULT_GRADE_JOBS, parallel_grades=DEFAULT_PARALLEL_GRADES,
                 build_jobs=None, region_names=None):
        self.logs = logs
        self.tree = build.GradeTree(ROOT, build_dir)
        self.lesson_range = lesson_range  # (first, last)
        self.kinds = kinds
        self.margin = margin
        self.grade_jobs = grade_jobs
        self.parallel_grades = parallel_grades
        self.build_jobs = build_jobs or os.cpu_count() or 2
        self.region_names = region_names  # None: every region, and the hand-out
        self.checks = []  # (name, passed, detail, seconds)
        self.outcomes = []
        self.missing = []
        self.unbuilt = set()  # empty variants that did not build
        self.start = time.monotonic()
        self.public = shapes.public_shapes(ROOT)

    def check(self, name, passed, detail="", seconds=0.0):
        self.checks.append((name, bool(passed), detail, seconds))
        mark = "PASS" if passed else "FAIL"
        print(f"[{time.monotonic() - self.start:6.0f} s] {mark} {name}" + (f": {detail}" if detail else ""),
              flush=True)

    def catalog(self):
        """{number: (Lesson, kernel text, regions)} of the lessons in the range."""
        found = {}
        first, last = self.lesson_range
        for number in sorted(lessons.lesson_folders(ROOT)):
            if not first <= number <= last:
                continue
            try:
                lesson = lessons.load(ROOT, number)
                text = (ROOT / lesson.kernel).read_text()
                found[number] = (lesson, text, regions.parse_regions(text, lesson.kernel))
            except (lessons.LessonError, regions.RegionError) as error:
                self.check(f"lesson {number:02d} follows the conventions", False, str(error))
        return found

    def submission_file(self, variant):
        path = self.logs / "submissions" / variant.name / lessons.load(ROOT, variant.lesson).exercise
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(variant.text)
        return path

    # ---- 1: build everything at once -------------------------------------------------------

    def prebuild(self, catalog, variants):
        """Adds every variant's folder to the grading tree and builds them all in one go; the
        grader finds the same folders again (same contents). {name: Folder}."""
        started = time.monotonic()
        targets, folders, must_build = [], {}, []
        with self.tree.locked():
            for variant in variants:
                lesson, course_text, lesson_regions = catalog[variant.lesson]
                spliced = regions.splice(course_text, variant.text, regions.cut(course_text)).text
                checks = regions.host_checks(lesson_regions)
                folder = folders[variant.name] = self.tree.add(lesson, spliced, checks, with_pair=True)
                mine = [folder.target("lesson")] + [folder.target(f"check_{check}") for check in checks]
                timed = variant.kind == "solution" and not lesson.tensor_parallel
                mine += [folder.target("pair")] if timed else []
                targets += mine
                must_build += [] if variant.may_fail_to_build else mine
            references = [f"lesson{number:02d}" for number in catalog]
            self.tree.configure()
            outcomes = self.tree.build(sorted(set(targets + references)), PREBUILD_SECONDS,
                                       self.build_jobs)
        failed = {target: outcome for target, outcome in outcomes.items() if not outcome.ok}
        (self.logs / "build_failures.log").write_text(
            "\n\n".join(f"== {target}\n{outcome.log}" for target, outcome in failed.items()))
        unexpected = sorted(set(failed) & set(must_build + references))
        self.check(f"everything builds ({len(outcomes)} targets, {self.build_jobs} jobs)", not unexpected,
                   "failed: " + ", ".join(unexpected) if unexpected else
                   f"{len(failed)} expected failure(s)", time.monotonic() - started)
        # An empty region that does not build scores 0 at the grader's build step: recorded as
        # such, rather than compiled (and failed) once more by a grade.
        self.unbuilt = {variant.name for variant in variants if variant.kind == "empty"
                        and folders[variant.name].target("lesson") in failed}
        return folders

    # ---- 2-4: grades -----------------------------------------------------------------------

    def grade_once(self, variant, mode):
        started = time.monotonic()
        grader = grade.Grader(variant.lesson, self.submission_file(variant),
                              self.logs / "grades" / f"{variant.name}-{mode}", self.tree.tree,
                              quick=mode == QUICK, secret=SECRET, run_seconds=variant.run_seconds,
                              keep_build=True, jobs=self.grade_jobs)
        grader.grade()
        seconds = time.monotonic() - started
        report = grader.report
        outputs = "\n".join(test.output for test in report.tests)
        logs = "".join(path.read_text(errors="replace") for path in grader.runs_dir.glob("*.log"))
        misses = expectation_misses(report, variant.expect, outputs, logs,
                                    time.monotonic() - grader.start, grader.bound_seconds)
        if not valid_results_json(grader.results):
            misses.append("results.json is not valid")
        gpu = next((first.get("gpu", "") for first in grader.first_reports.values()), "")
        return Attempt(mode, report.score, seconds, misses, report.infrastructure_error,
                       dict(grader.performance_ratios), gpu)

    def grade_solution(self, variant):
        """The solution's full grade: 100, or a miss saying what failed."""
        attempt = self.grade_once(variant, FULL)
        if attempt.score < 100 - 1e-6:
            attempt.misses.append(f"score {attempt.score:g}, not 100; see "
                                  f"{self.logs / 'grades' / (variant.name + '-full') / 'summary.txt'}")
        return Outcome(variant, [attempt])

    def judge(self, variant):
        if variant.kind == "solution":
            return self.grade_solution(variant)
        if variant.name in self.unbuilt:
            return Outcome(variant, [Attempt("build", 0.0, 0.0, [])])
        return grade_with_escalation(variant, self.grade_once, self.margin)

    def report_outcome(self, outcome):
        variant, final = outcome.variant, outcome.final
        modes = ", then ".join(attempt.mode for attempt in outcome.attempts)
        if variant.kind == "solution":
            name = f"solution of lesson {variant.lesson:02d} scores 100 (full grade)"
            detail = (f"{final.score:g} points in {final.seconds:.0f} s, self ratios "
                      + (", ".join(f"{size}: {ratio:.3f}" for size, ratio in final.ratios.items()) or "n/a"))
        elif variant.kind == "handout":
            name = f"untouched hand-out of lesson {variant.lesson:02d} scores 0 without hanging"
            detail = f"{final.score:g} points"
        else:
            name = f"lesson {variant.lesson:02d} {variant.region}, {variant.label}: {variant.what}"
            detail = f"{final.score:g} points ({modes})"
        if final.misses:
            detail += "; " + "; ".join(final.misses)
        self.check(name, outcome.passed, detail, sum(attempt.seconds for attempt in outcome.attempts))

    def grade_all(self, variants):
        """Grades the variants, --parallel-grades at once; the outcomes in the variants' order."""
        outcomes = {}
        with concurrent.futures.ThreadPoolExecutor(self.parallel_grades) as pool:
            futures = {pool.submit(self.judge, variant): variant for variant in variants}
            for future in concurrent.futures.as_completed(futures):
                variant = futures[future]
                try:
                    outcome = future.result()
                except Exception as error:  # a bug of the grader: the other grades go on
                    outcome = Outcome(variant, [Attempt("error", 0.0, 0.0, [
                        f"the validation failed to grade it: {type(error).__name__}: {error}"])])
                self.report_outcome(outcome)
                outcomes[variant.name] = outcome
        return [outcomes[variant.name] for variant in variants]

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

    def run(self, build_only=False, keep_builds=False):
        catalog = self.catalog()
        if not catalog:
            raise InfrastructureError(f"no lesson in the range {self.lesson_range}")
        planted = load_planted()
        self.missing = missing_planted(catalog, planted)
        self.check("every region has a planted wrong answer", not self.missing,
                   "missing for: " + ", ".join(self.missing) if self.missing else "")
        variants = [variant for number, (_, text, lesson_regions) in catalog.items()
                    for variant in lesson_variants(number, text, lesson_regions, planted,
                                                   self.public, self.kinds)]
        if self.region_names is not None:
            known = {region.name for _, _, lesson_regions in catalog.values() for region in lesson_regions}
            unknown = sorted(set(self.region_names) - known)
            if unknown:
                raise InfrastructureError(f"no region named {', '.join(unknown)} in the range")
            variants = [variant for variant in variants
                        if variant.region is None or variant.region in self.region_names]
        last = max(catalog)
        if self.region_names is None:
            variants.append(Variant(f"{last:02d}_handout", last, None, "handout",
                                    regions.cut(catalog[last][1]), what="the untouched hand-out",
                                    modes=(QUICK,), expect={"score_max": 0, "no_hang": True}))
        folders = self.prebuild(catalog, variants)
        if build_only:
            return
        probe = run_limited([self.tree.executable(f"lesson{min(catalog):02d}"), "--m", "8", "--n", "8",
                             "--k", "8", *grade.CHECK_RUN], grade.CANARY_SECONDS, self.logs)
        if probe.exit_code == 2:
            raise InfrastructureError("this machine has no CUDA GPU: " + probe.last_lines(1))
        # The solutions first: they take longest, and their performance runs need the GPU alone.
        variants.sort(key=lambda variant: variant.kind != "solution")
        self.outcomes = self.grade_all(variants)
        left = self.leftovers()
        self.check("no process left behind", not left, f"still running: {left}" if left else "")
        if not keep_builds:
            with self.tree.locked():
                for folder in folders.values():
                    self.tree.remove(folder)

    # ---- Output ----------------------------------------------------------------------------

    def document(self, seconds):
        """validation.json: what docs/grading.md's tables are made of."""
        solutions, variants = [], []
        for outcome in self.outcomes:
            variant, final = outcome.variant, outcome.final
            if variant.kind == "solution":
                solutions.append({"lesson": variant.lesson, "score": final.score,
                                  "seconds": round(final.seconds, 1), "self_ratios": final.ratios,
                                  "gpu": final.gpu, "passed": outcome.passed, "misses": final.misses})
            elif variant.kind != "handout":
                variants.append({
                    "lesson": variant.lesson, "region": variant.region, "kind": variant.kind,
                    "name": variant.label, "what": variant.what, "mode": final.mode,
                    "score": final.score, "seconds": round(sum(a.seconds for a in outcome.attempts), 1),
                    "passed": outcome.passed, "misses": final.misses,
                    "attempts": [{"mode": attempt.mode, "score": attempt.score,
                                  "seconds": round(attempt.seconds, 1)} for attempt in outcome.attempts]})
        first, last = self.lesson_range
        return {"format": 1, "lessons": f"{first:02d}-{last:02d}", "commit": commit_description(),
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "host": platform.node(), "kinds": list(self.kinds), "margin": self.margin,
                "grade_jobs": self.grade_jobs, "parallel_grades": self.parallel_grades,
                "seconds": round(seconds, 1), "passed": all(check[1] for check in self.checks),
                "missing_planted": self.missing, "solutions": solutions, "variants": variants,
                "checks": [{"name": name, "passed": passed, "detail": detail, "seconds": round(spent, 1)}
                           for name, passed, detail, spent in self.checks]}


def valid_results_json(results_dir):
    try:
        results = json.loads((Path(results_dir) / "results.json").read_text())
        return isinstance(results.get("tests"), list)
    except (OSError, ValueError):
        return False


def commit_description():
    """'1a2b3c4', or '1a2b3c4-dirty' with uncommitted changes (homework.source_record)."""
    record = homework.source_record(ROOT)
    short = record["commit"][:7] if record["commit"] else "unknown"
    return short + ("-dirty" if record["uncommitted_changes"] else "")


def markdown_tables(documents):
    """The Markdown tables of docs/grading.md from validation.json documents (one per part)."""
    ratio_shapes = [f"{m} x {n} x {k}" for m, n, k in shapes.PERFORMANCE_SHAPES]
    lines = ["| part | commit | date | GPU host | checks | seconds |", "|---|---|---|---|---|---:|"]
    for document in documents:
        failed = sum(1 for check in document["checks"] if not check["passed"])
        lines.append(f"| {document['lessons']} | {document['commit']} | {document['date']} | "
                     f"{document['host']} | {len(document['checks']) - failed} passed, {failed} failed "
                     f"| {document['seconds']:.0f} |")
    lines += ["", "| lesson | solution, full grade | seconds | "
              + " | ".join(f"self ratio {size}" for size in ratio_shapes) + " |",
              "|---|---:|---:|" + "---:|" * len(ratio_shapes)]
    for solution in sorted((s for d in documents for s in d["solutions"]), key=lambda s: s["lesson"]):
        ratios = [solution["self_ratios"].get(size) for size in ratio_shapes]
        lines.append(f"| {solution['lesson']:02d} | {solution['score']:g} | {solution['seconds']:.0f} | "
                     + " | ".join("n/a" if ratio is None else f"{ratio:.3f}" for ratio in ratios) + " |")
    lines += ["", "| lesson | region | variant | graded | score | seconds | verdict |",
              "|---|---|---|---|---:|---:|---|"]
    for variant in sorted((v for d in documents for v in d["variants"]),
                          key=lambda v: (v["lesson"], v["region"] or "", v["kind"], v["name"])):
        graded = ", then ".join(attempt["mode"] for attempt in variant["attempts"])
        verdict = "clearly below" if variant["passed"] else "FAIL: " + "; ".join(variant["misses"])
        lines.append(f"| {variant['lesson']:02d} | `{variant['region']}` | {variant['name']} | {graded} "
                     f"| {variant['score']:g} | {variant['seconds']:.0f} | {verdict} |")
    missing = sorted({name for document in documents for name in document["missing_planted"]})
    if missing:
        lines += ["", "Regions without a planted wrong answer: " + ", ".join(missing) + "."]
    return "\n".join(lines) + "\n"


def lesson_range(text):
    first, _, last = text.partition("-")
    if not first.strip().isdigit() or (last and not last.strip().isdigit()):
        raise argparse.ArgumentTypeError(f"--lessons takes FIRST-LAST such as 01-05, not '{text}'")
    return int(first), int(last or first)


def kind_list(text):
    kinds = tuple(kind.strip() for kind in text.split(",") if kind.strip())
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(f"--kinds takes some of {','.join(KINDS)}, not '{text}'")
    return kinds


def main(argv=None):
    parser = argparse.ArgumentParser(description="Validate the grader on this GPU machine.")
    parser.add_argument("logs", type=Path, nargs="?", help="folder for the logs, the summary and "
                        "validation.json")
    parser.add_argument("--lessons", type=lesson_range, default=None,
                        help="the lessons of this part, e.g. 04-06 (default: every lesson, which "
                             "takes far longer than 10 minutes)")
    parser.add_argument("--kinds", type=kind_list, default=KINDS,
                        help="what to grade: some of solution,empty,stub,planted (default: all)")
    parser.add_argument("--margin", type=float, default=CLEARLY_BELOW_POINTS,
                        help=f"points a variant must score below 100 (default {CLEARLY_BELOW_POINTS})")
    parser.add_argument("--grade-jobs", type=int, default=DEFAULT_GRADE_JOBS,
                        help=f"correctness runs at once in a grade (default {DEFAULT_GRADE_JOBS})")
    parser.add_argument("--parallel-grades", type=int, default=DEFAULT_PARALLEL_GRADES,
                        help=f"grades at once (default {DEFAULT_PARALLEL_GRADES})")
    parser.add_argument("--build-jobs", type=int, default=None, help="compile jobs (default: the cores)")
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build-grading")
    parser.add_argument("--build-only", action="store_true",
                        help="build the part's variants and stop (no GPU needed; the next call "
                             "for the same part reuses the builds)")
    parser.add_argument("--keep-builds", action="store_true",
                        help="keep the variants' builds in the grading tree afterwards")
    parser.add_argument("--regions", type=lambda text: [name.strip() for name in text.split(",")
                                                        if name.strip()],
                        default=None, help="only these regions' variants (and the solutions)")
    parser.add_argument("--tables", type=Path, nargs="+", metavar="JSON",
                        help="print the Markdown tables of these validation.json files and stop")
    args = parser.parse_args(argv)
    if args.tables:
        print(markdown_tables([json.loads(path.read_text()) for path in args.tables]), end="")
        return 0
    if args.logs is None:
        parser.error("LOGDIR is needed (or --tables)")
    everything = lessons.lesson_folders(ROOT)
    first, last = args.lessons or (min(everything), max(everything))
    args.logs.mkdir(parents=True, exist_ok=True)
    validation = Validation(args.logs.resolve(), args.build_dir.resolve(), (first, last), args.kinds,
                            args.margin, args.grade_jobs, args.parallel_grades, args.build_jobs,
                            args.regions)
    try:
        validation.run(args.build_only, args.keep_builds or args.build_only)
    except (InfrastructureError, PlantedError) as error:
        validation.check("the validation ran to its end", False, str(error))
    total = time.monotonic() - validation.start
    failed = [check for check in validation.checks if not check[1]]
    lines = [f"{'PASS' if passed else 'FAIL'}  {seconds:6.0f} s  {name}" + (f"  ({detail})" if detail and not passed else "")
             for name, passed, detail, seconds in validation.checks]
    calibration = [outcome for outcome in validation.outcomes if outcome.variant.kind == "solution"]
    if calibration:
        lines += ["", "Calibration, each solution timed against itself (self ratio per performance shape):"]
        lines += [f"  {outcome.variant.lesson:02d}: " + (", ".join(
            f"{size} {ratio:.3f}" for size, ratio in outcome.final.ratios.items()) or "n/a")
            + f" ({outcome.final.seconds:.0f} s full grade)" for outcome in calibration]
    over = total > PART_LIMIT_SECONDS and not args.build_only
    lines += ["", f"Grader validation of lessons {first:02d}-{last:02d}"
              + (" (build only)" if args.build_only else "")
              + f": {len(validation.checks) - len(failed)} passed, {len(failed)} failed, in {total:.0f} s"
              + (f" OVER {PART_LIMIT_SECONDS} s: split the part (--lessons, --kinds)" if over else "")
              + f"; logs in {args.logs}"]
    summary = "\n".join(lines)
    (args.logs / "summary.txt").write_text(summary + "\n")
    if not args.build_only:
        (args.logs / "validation.json").write_text(json.dumps(validation.document(total), indent=2) + "\n")
    print("\n" + summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
