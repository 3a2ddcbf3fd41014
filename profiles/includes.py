"""The #include "..." lines of a course source, read as text (no preprocessor). The course writes
them with paths from the repository root (docs/conventions.md), or from the including file's folder.
The tools that follow includes (diff.py, compare.py, the homework tool, the include test) read
them here."""
import re

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"(?P<path>[^"]+)"', re.MULTILINE)


def quoted_includes(text):
    """The paths of the text's #include "..." lines, in order."""
    return [match["path"] for match in INCLUDE.finditer(text)]
