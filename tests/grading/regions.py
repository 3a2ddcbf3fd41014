"""Exercise regions: finding them, cutting them out of a lesson, splicing a submission back in.

A region is the part of a lesson's kernel.cuh that a student writes:

    // BEGIN EXERCISE(name[, attribute]...): one-line task
    //   the task may go on, on comment lines with a hanging indent (two spaces after //)
    ... the lesson's solution ...
    // END EXERCISE

Attributes say what the hand-out's stub needs beyond the generic one (docs/grading.md):

    declares=NAME [NAME...]  the region declares NAME, used after it; the stub keeps a declaration
                             of the same type, value-initialized (`float accumulator{};`)
    returns                  the region ends a function that returns a value; the stub returns a
                             value-initialized one (`return {};`)
    host-check=CHECK         the grader also builds tests/grading/host_checks/CHECK.cu against
                             the submission and runs it on the host (e.g. a bank-conflict check)
    uses=NAME [NAME...]      with returns: the stub returns the sum of these values, which the
                             region reads, instead of `{}` (`return product + bias;`): a stub that
                             returns a constant lets the compiler drop what computed them, and the
                             kernel around it compiles differently (lesson 15's spilled)

The stub calls gemm::exercise::unwritten() (common/exercise.hpp), which traps at run time.

Everything here is plain text processing: no compiler is involved, so it runs anywhere.
"""
import dataclasses
import difflib
import re

# "// BEGIN EXERCISE(spec): task" and "// END EXERCISE", each alone on its line.
BEGIN_MARKER = re.compile(r"^(?P<indent>[ \t]*)// BEGIN EXERCISE\((?P<spec>[^)]*)\)(?::[ \t]*(?P<task>.*))?$")
END_MARKER = re.compile(r"^[ \t]*// END EXERCISE[ \t]*$")
# A line that continues the task: a comment whose text starts after a hanging indent.
TASK_CONTINUATION = re.compile(r"^[ \t]*//[ \t]{2,}\S")
REGION_NAME = re.compile(r"[a-z][a-z0-9_]*")
ATTRIBUTE = re.compile(r"(?P<key>[a-z][a-z-]*)(?:=(?P<value>.+))?")
KNOWN_ATTRIBUTES = {"declares", "returns", "host-check", "uses"}

# The stub's trap and the header that defines it.
STUB_CALL = "gemm::exercise::unwritten();"
EXERCISE_INCLUDE = '#include "common/exercise.hpp"'


class RegionError(Exception):
    """A kernel.cuh whose exercise markers are malformed; the message names the line."""


@dataclasses.dataclass
class Region:
    name: str
    attributes: dict   # "declares" -> [names], "returns" -> True, "host-check" -> name
    task: str          # the task text of the marker, continuation lines joined
    indent: str        # the marker's indentation, which the stub copies
    begin: int         # index of the BEGIN line
    body_start: int    # index of the first line after the marker and its task continuation
    end: int           # index of the END line

    def body(self, lines):
        """The region's own lines (what the student writes), from the file's lines."""
        return lines[self.body_start:self.end]


def parse_attributes(spec, where):
    """'dot_product, declares=accumulator, returns' -> ('dot_product', {...})."""
    name, *attribute_texts = [part.strip() for part in spec.split(",")]
    if not REGION_NAME.fullmatch(name):
        raise RegionError(f"{where}: exercise name '{name}' must be lower_case_with_underscores")
    attributes = {}
    for text in attribute_texts:
        match = ATTRIBUTE.fullmatch(text)
        if not match or match["key"] not in KNOWN_ATTRIBUTES:
            raise RegionError(f"{where}: unknown exercise attribute '{text}' "
                              f"(known: {', '.join(sorted(KNOWN_ATTRIBUTES))})")
        key, value = match["key"], match["value"]
        if key == "returns":
            if value is not None:
                raise RegionError(f"{where}: 'returns' takes no value")
            attributes[key] = True
        elif not value:
            raise RegionError(f"{where}: '{key}' needs a value")
        elif key in ("declares", "uses"):
            attributes[key] = value.split()
        else:
            attributes[key] = value.strip()
    if "uses" in attributes and not attributes.get("returns"):
        raise RegionError(f"{where}: 'uses' names what the stub returns: it needs 'returns'")
    return name, attributes


def parse_regions(text, origin="kernel.cuh"):
    """Every region of a file, in order. Raises RegionError on a malformed or unpaired marker."""
    lines = text.split("\n")
    regions = []
    open_region = None
    for index, line in enumerate(lines):
        where = f"{origin}:{index + 1}"
        begin = BEGIN_MARKER.match(line)
        if begin:
            if open_region:
                raise RegionError(f"{where}: BEGIN EXERCISE inside region '{open_region.name}'")
            name, attributes = parse_attributes(begin["spec"], where)
            if any(region.name == name for region in regions):
                raise RegionError(f"{where}: a second exercise named '{name}'")
            body_start = index + 1
            task = [begin["task"] or ""]
            while body_start < len(lines) and TASK_CONTINUATION.match(lines[body_start]):
                task.append(lines[body_start].strip()[2:].strip())
                body_start += 1
            open_region = Region(name, attributes, " ".join(part for part in task if part),
                                 begin["indent"], index, body_start, -1)
        elif END_MARKER.match(line):
            if not open_region:
                raise RegionError(f"{where}: END EXERCISE without a BEGIN")
            open_region.end = index
            regions.append(open_region)
            open_region = None
        elif "EXERCISE" in line and ("BEGIN" in line or "END" in line) and line.lstrip().startswith("//"):
            raise RegionError(f"{where}: malformed exercise marker: {line.strip()}")
    if open_region:
        raise RegionError(f"{origin}:{open_region.begin + 1}: region '{open_region.name}' has no "
                          "END EXERCISE")
    return regions


# ---- Cutting -------------------------------------------------------------------------------------

def host_checks(region_list):
    """The host checks that a lesson's regions ask for (their host-check attributes), sorted."""
    return sorted({region.attributes["host-check"] for region in region_list
                   if "host-check" in region.attributes})


def declaration_type(body, name, region_name):
    """The type in the region's one-line declaration of `name` ('float', 'const bf16*')."""
    pattern = re.compile(r"^\s*(?P<type>[\w:<>,*& ]+?)\s*\b" + re.escape(name) + r"\s*(=|\{|;)")
    for line in body:
        match = pattern.match(line)
        if match and match["type"].split()[-1] not in {"return", "else"}:
            return match["type"].strip()
    raise RegionError(f"exercise '{region_name}' declares={name}, but no line of it starts with a "
                      f"one-line declaration of {name}")


def stub_lines(region, body):
    """The lines that replace a region's body in the hand-out."""
    lines = [f"{region.indent}// Your code here (see the task above). Until it is written, this "
             "stub stops the kernel.",
             region.indent + STUB_CALL]
    for name in region.attributes.get("declares", []):
        lines.append(f"{region.indent}{declaration_type(body, name, region.name)} {name}{{}};")
    if region.attributes.get("returns"):
        used = region.attributes.get("uses")
        lines.append(region.indent + "return " + (" + ".join(used) if used else "{}") + ";")
    return lines


def replace_bodies(text, bodies_by_name):
    """The file with the body of each named region replaced; the markers stay."""
    lines = text.split("\n")
    for region in reversed(parse_regions(text)):
        if region.name in bodies_by_name:
            lines[region.body_start:region.end] = bodies_by_name[region.name]
    return "\n".join(lines)


def with_exercise_include(text):
    """The file, including common/exercise.hpp: in order among its other common/ includes, or in a
    group of its own after its standard ones when it has none (lesson 19's rows.hpp)."""
    if EXERCISE_INCLUDE in text:
        return text
    lines = text.split("\n")
    includes = [index for index, line in enumerate(lines) if line.startswith('#include "')]
    if includes:
        later = [index for index in includes if lines[index] > EXERCISE_INCLUDE]
        lines.insert(later[0] if later else includes[-1] + 1, EXERCISE_INCLUDE)
        return "\n".join(lines)
    standard = [index for index, line in enumerate(lines) if line.startswith("#include <")]
    if not standard:
        raise RegionError("the exercise file has no #include line to put common/exercise.hpp next to")
    lines[standard[-1] + 1:standard[-1] + 1] = ["", EXERCISE_INCLUDE]
    return "\n".join(lines)


def cut(text, only=None):
    """The hand-out version of a kernel: every region's body (or only the named ones) replaced by
    its stub, and the stub's header included. The markers and everything else stay."""
    lines = text.split("\n")
    regions = parse_regions(text)
    names = [region.name for region in regions]
    for name in only or []:
        if name not in names:
            raise RegionError(f"no exercise named '{name}' (this kernel has: {', '.join(names)})")
    stubs = {region.name: stub_lines(region, region.body(lines)) for region in regions
             if only is None or region.name in only}
    return with_exercise_include(replace_bodies(text, stubs))


# ---- Splicing ------------------------------------------------------------------------------------

@dataclasses.dataclass
class Splice:
    text: str                  # the course's kernel with the submission's region bodies
    outside_changes: list      # unified-diff lines: what the submission changed outside the regions
    bodies: dict               # name -> the submission's body lines


def outside_lines(text):
    """The file without the region bodies (markers and task lines stay): what the course owns."""
    lines = text.split("\n")
    kept = []
    start = 0
    for region in parse_regions(text):
        kept.extend(lines[start:region.body_start])
        kept.append(f"    ... body of exercise {region.name} ...")
        start = region.end
    kept.extend(lines[start:])
    # The hand-out adds the stub's include; whether a submission kept it makes no difference.
    return [line for line in kept if line != EXERCISE_INCLUDE]


def splice(course_text, submission_text, handout_text, submission_name="submission"):
    """Puts the submission's region bodies into the course's kernel.

    Only the bodies count: the course's markers, code and comments around them stay. A body that
    still holds the hand-out's stub makes the result include the stub's header, so an untouched
    hand-out builds and fails at run time as it does for the student. The region names and their
    order must match (RegionError otherwise). `handout_text`, the kernel the student started from,
    is what outside_changes compares the submission with.
    """
    course_regions = parse_regions(course_text, "the course's kernel.cuh")
    submission_regions = parse_regions(submission_text, submission_name)
    expected = [region.name for region in course_regions]
    found = [region.name for region in submission_regions]
    if found != expected:
        raise RegionError(f"{submission_name}: the exercise regions are {found or 'none'}, "
                          f"expected {expected} (in this order)")
    submission_lines = submission_text.split("\n")
    bodies = {region.name: region.body(submission_lines) for region in submission_regions}
    text = replace_bodies(course_text, bodies)
    if any(STUB_CALL in line for body in bodies.values() for line in body):
        text = with_exercise_include(text)
    changes = list(difflib.unified_diff(outside_lines(handout_text), outside_lines(submission_text),
                                        "hand-out", submission_name, n=0, lineterm=""))
    return Splice(text, changes, bodies)


# ---- What a region's code contains ---------------------------------------------------------------

class LexError(Exception):
    """Text that is not well-formed C++ tokens (an unterminated comment or literal, ...)."""


def code_only(body):
    """The body's lines with comments and the contents of string and character literals blanked
    (same line count), so that checks on code see neither. Raises LexError where the text could
    reach past the region: an unterminated block comment or literal, a raw string, a
    backslash-newline."""
    for number, body_line in enumerate(body, start=1):
        # Also with spaces after it: compilers still join the lines (with a warning at most).
        if body_line.rstrip().endswith("\\"):
            raise LexError(f"line {number} of the region: a backslash at the end of a line joins "
                           "it with the next one")
    text = "\n".join(body)
    out = []
    index = 0
    line = 1

    def fail(message):
        raise LexError(f"line {line} of the region: {message}")

    while index < len(text):
        char = text[index]
        following = text[index + 1] if index + 1 < len(text) else ""
        if char == "\n":
            line += 1
            out.append(char)
            index += 1
        elif char == "/" and following == "/":
            newline = text.find("\n", index)
            comment_end = len(text) if newline < 0 else newline
            out.append(" " * (comment_end - index))
            index = comment_end
        elif char == "/" and following == "*":
            close = text.find("*/", index + 2)
            if close < 0:
                fail("a /* comment that is not closed inside the region")
            comment = text[index:close + 2]
            out.append("".join("\n" if c == "\n" else " " for c in comment))
            line += comment.count("\n")
            index = close + 2
        elif char in "\"'":
            prefix = re.search(r"\w*$", text[max(0, index - 16):index])[0]
            if char == '"' and prefix.endswith("R"):
                fail("raw string literals are not allowed")
            if char == "'" and prefix and prefix[-1].isalnum() and following.isalnum() \
                    and prefix not in {"u8", "u", "U", "L"}:
                out.append(char)  # a digit separator: 1'000'000
                index += 1
                continue
            close = index + 1
            while close < len(text) and text[close] != char:
                if text[close] == "\n":
                    fail("a string or character literal that does not end on its line")
                close += 2 if text[close] == "\\" else 1
            if close >= len(text):
                fail("a string or character literal that is not closed")
            out.append(char + " " * (close - index - 1) + char)
            index = close + 1
        else:
            out.append(char)
            index += 1
    return "".join(out).split("\n")


IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
PRAGMA_UNROLL = re.compile(r"^\s*#\s*pragma\s+unroll(\s+[\w:()+\-* ]+)?\s*$")
DIGRAPHS = ("<%", "%>", "<:", ":>", "%:")
TRIGRAPH = re.compile(r"\?\?[=/'()!<>\-]")
BRACKETS = {"(": ")", "[": "]", "{": "}"}

# Never allowed in a region: they declare or run code outside the kernel's function body, or
# change how the rest of the file is compiled.
FORBIDDEN_WORDS = {"extern", "namespace", "__host__", "__global__", "_Pragma", "__pragma",
                   "__launch_bounds__", "__maxnreg__", "__cluster_dims__", "__declspec",
                   "__attribute__"}
# Allowed only where the course's own solution of the region uses them: inline assembly and
# declarations with effects beyond the region's statements.
GUARDED_WORDS = {"asm", "__asm__", "__asm", "volatile", "goto", "static", "template", "struct",
                 "class", "union", "enum", "typedef", "operator", "thread_local", "__shared__",
                 "__device__", "__constant__", "__managed__", "__noinline__", "__forceinline__"}
# Never needed for the homework: a call into a library or the operating system. The grader flags
# a submission that names one for a teaching assistant to review.
FLAGGED_WORD = re.compile(r"^(cublas\w*|cudnn\w*|cutlass|cute|dlopen|dlsym|dlmopen|popen|system|"
                          r"fork|vfork|exec[lv]\w*|fopen|open|getenv|setenv|__cudaRegister\w*|"
                          r"cudaLaunch\w*|cuLaunch\w*|cuModule\w*|cudaGetSymbolAddress|"
                          r"cudaMemcpyToSymbol\w*)$")

# Size limits of a region, relative to the course's solution of it.
MAX_LINES_FACTOR, MIN_MAX_LINES = 5, 60
MAX_CHARS_FACTOR, MIN_MAX_CHARS = 5, 6000


def words(code_lines):
    return {word for line in code_lines for word in IDENTIFIER.findall(line)}


def region_limits(reference_body):
    """What a submitted body of this region may be, from the course's solution of it: its size
    limits, and the guarded words the solution uses (a hand-out records these for its grader)."""
    text = "\n".join(reference_body)
    return {"max_lines": max(MIN_MAX_LINES, MAX_LINES_FACTOR * len(reference_body)),
            "max_chars": max(MIN_MAX_CHARS, MAX_CHARS_FACTOR * len(text)),
            "allowed_words": sorted(words(code_only(reference_body)) & GUARDED_WORDS)}


def validate_body(name, body, limits):
    """Problems of one submitted region body, as lines for the student ([] if none). `limits`
    comes from region_limits of the course's solution."""
    problems = []
    text = "\n".join(body)
    max_lines, max_chars = limits["max_lines"], limits["max_chars"]
    if len(body) > max_lines or len(text) > max_chars:
        problems.append(f"exercise {name}: {len(body)} lines, {len(text)} characters; the limit "
                        f"is {max_lines} lines and {max_chars} characters")
        return problems
    try:
        code = code_only(body)
    except LexError as error:
        return [f"exercise {name}: {error}"]
    depth = []
    for number, line in enumerate(code, start=1):
        where = f"exercise {name}, line {number} of the region"
        stripped = line.strip()
        if "#" in line and not PRAGMA_UNROLL.match(line):
            problems.append(f"{where}: no preprocessor lines (only '#pragma unroll'): {stripped}")
        for digraph in DIGRAPHS:
            if digraph in line:
                problems.append(f"{where}: the digraph '{digraph}' is not allowed")
        if TRIGRAPH.search(line):
            problems.append(f"{where}: trigraphs are not allowed")
        for char in line:
            if char in BRACKETS:
                depth.append(BRACKETS[char])
            elif char in BRACKETS.values():
                if not depth or depth.pop() != char:
                    problems.append(f"{where}: '{char}' closes something the region did not open")
                    depth = []
                    break
    if depth:
        problems.append(f"exercise {name}: {len(depth)} bracket(s) left open at the end of the "
                        f"region (expected '{''.join(reversed(depth))}')")
    used = words(code)
    for word in sorted(used & FORBIDDEN_WORDS):
        problems.append(f"exercise {name}: '{word}' is not allowed in a region")
    for word in sorted((used & GUARDED_WORDS) - set(limits["allowed_words"])):
        problems.append(f"exercise {name}: '{word}' is not allowed in this region (the course's "
                        "solution does without it)")
    return problems


def flagged_words(body):
    """Names in the region's code (not its comments) that call for a review: cuBLAS, dlopen, ..."""
    try:
        code = code_only(body)
    except LexError:
        return []
    return sorted(word for word in words(code) if FLAGGED_WORD.match(word))


# ---- Solution lines, for the hand-out's leak check -----------------------------------------------

MIN_SOLUTION_LINE = 20  # shorter lines ("} else {", "#pragma unroll") say nothing


def normalize(line):
    """A line with comments cut and whitespace collapsed, for comparing code across files."""
    return " ".join(line.split("//")[0].split())


def solution_lines(text):
    """The distinctive code lines of a kernel's regions: long enough, and not also found outside
    the regions of the same file (a loop header the epilogue repeats gives nothing away)."""
    lines = text.split("\n")
    regions = parse_regions(text)
    inside = set()
    for region in regions:
        inside.update(range(region.body_start, region.end))
    outside = {normalize(line) for index, line in enumerate(lines) if index not in inside}
    found = []
    for region in regions:
        for line in region.body(lines):
            normal = normalize(line)
            if len(normal) >= MIN_SOLUTION_LINE and not any(normal in other for other in outside):
                found.append((region.name, normal))
    return found
