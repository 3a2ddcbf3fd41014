"""The kLesson entry of a lesson's kernel.cuh, read as text, for the tools that need a lesson's
number, parent, slug or title without compiling it (profiles/diff.py, the homework tool and the
grader):

    inline constexpr gemm::Lesson kLesson{
        .id = 12, .parent = 10, .slug = "cluster_multicast", .title = "...", ...};
"""
import re

ENTRY = re.compile(r"inline\s+constexpr\s+gemm::Lesson\s+kLesson\s*\{(?P<body>.*?)\};", re.DOTALL)
FIELD = re.compile(r"\.(?P<name>id|parent|slug|title)\s*=\s*(?P<value>\d+\b|\"[^\"]*\")")


def read_entry(text):
    """{name: value} of the fields id and parent (ints), slug and title (strings) that the entry
    sets; {} if the text has no entry."""
    entry = ENTRY.search(text)
    if not entry:
        return {}
    return {field["name"]: field["value"].strip('"') if field["value"].startswith('"')
            else int(field["value"])
            for field in FIELD.finditer(entry["body"])}
