"""The teaching copies of the course's sources, read as text, for the tools that need them
(profiles/diff.py, the tool test tests/tools/test_teaching_copies.py and the homework tool).

A piece that a lesson teaches is spelled out in its kernel.cuh, and the same code sits in a header
under common/ for the later lessons, both between two comment lines:

    // BEGIN TEACHING COPY(name)
    ...
    // END TEACHING COPY

A common header that holds the answer of an exercise region says which lesson teaches it, in its
first lines (`// Taught in lesson NN: ...`): the hand-outs of that lesson and of the ones before it
leave the header out.
"""
import re

BEGIN = re.compile(r"^\s*// BEGIN TEACHING COPY\((?P<name>\w+)\)\s*$")
END = re.compile(r"^\s*// END TEACHING COPY\s*$")
TAUGHT_IN = re.compile(r"^///? Taught in lesson (?P<id>\d\d)\b")
TAUGHT_IN_LINES = 40


def teaching_copies(text, origin="the text"):
    """{name: (index of its BEGIN line, index of its END line)} of the teaching copies in a
    source's text (line indices from 0); raises ValueError on markers that do not pair up."""
    copies, name, first = {}, None, 0
    for index, line in enumerate(text.splitlines()):
        begin = BEGIN.match(line)
        if begin:
            if name:
                raise ValueError(f"{origin}:{index + 1}: a teaching copy inside '{name}'")
            name, first = begin["name"], index
        elif END.match(line):
            if not name:
                raise ValueError(f"{origin}:{index + 1}: END TEACHING COPY without a BEGIN")
            if name in copies:
                raise ValueError(f"{origin}:{index + 1}: a second teaching copy named '{name}'")
            copies[name] = (first, index)
            name = None
    if name:
        raise ValueError(f"{origin}: teaching copy '{name}' has no END TEACHING COPY")
    return copies


def taught_in(text):
    """The lesson whose exercise a common file spells out (its `// Taught in lesson NN` line
    within the first TAUGHT_IN_LINES lines), or None."""
    for line in text.split("\n")[:TAUGHT_IN_LINES]:
        match = TAUGHT_IN.match(line)
        if match:
            return int(match["id"])
    return None
