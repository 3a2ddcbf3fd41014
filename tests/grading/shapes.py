"""The shapes a submission is graded on.

Public: the course's GPU test list (tests/gpu/lesson_shapes_test.cu, kShapes), with its seeds
(1000 + the shape's index, as the GPU test uses).

Hidden: drawn from a secret by public code. HMAC-SHA256 of the secret and "lessonNN/i" seeds a
PRNG for shape i, so the shapes differ per lesson and per secret, nobody without the secret can
predict them, and anyone with it can reproduce them. Every hidden shape satisfies the shape
contract (M >= 1; N, K multiples of 8 and at least 8) and none equals a public shape. A lesson
whose contract asks more of K (lesson 18: K % 16 == 0) gets the public shapes that meet it, and
hidden shapes drawn to meet it.
"""
import dataclasses
import hashlib
import hmac
import random
import re
from pathlib import Path

PUBLIC_LIST = "tests/gpu/lesson_shapes_test.cu"
PUBLIC_ENTRY = re.compile(r'\{\s*"(?P<name>\w+)"\s*,\s*\{\s*(?P<m>\d+)\s*,\s*(?P<n>\d+)\s*,\s*(?P<k>\d+)\s*\}\s*\}')
PUBLIC_SEED_BASE = 1000

# The hidden shapes: (category, how many). Their order is fixed: shape i always has the same
# category, so a quick grade that takes the first of each keeps its meaning.
HIDDEN_CATEGORIES = (("ragged", 2), ("tiny", 2), ("skinny", 2), ("large", 2))

# A public subset for quick grades (the GPU validation): one of each kind, and a shape whose every
# tile Stream-K splits along K (lessons 14 and 15 run their Stream-K code only there).
QUICK_PUBLIC = ("ragged_all", "ragged_odd_small", "tiny", "skinny_n", "few_tiles_long_k", "large_4096")

# Where performance is measured (paired against the course's solution), and the small ragged
# shape of the sanitizers (as `make sanitize`).
PERFORMANCE_SHAPES = ((4096, 4096, 4096), (3000, 5000, 4000))
SANITIZER_SHAPE = (200, 136, 264)
# The same for a lesson whose K must be a multiple of 16.
SANITIZER_SHAPE_K16 = (200, 136, 272)
# The ragged shape run twice (bit-identical reruns), for either contract.
RERUN_SHAPES = ("ragged_all", "ragged_all_k_16")


def sanitizer_shape(k_multiple=8):
    return SANITIZER_SHAPE if SANITIZER_SHAPE[2] % k_multiple == 0 else SANITIZER_SHAPE_K16


@dataclasses.dataclass(frozen=True)
class Shape:
    name: str
    m: int
    n: int
    k: int
    seed: int
    hidden: bool = False

    @property
    def flops(self):
        return 2.0 * self.m * self.n * self.k

    @property
    def size(self):
        return f"{self.m} x {self.n} x {self.k}"

    def arguments(self):
        return ["--m", str(self.m), "--n", str(self.n), "--k", str(self.k), "--seed", str(self.seed)]


def public_shapes(root, k_multiple=8):
    """The public list's shapes whose K is a multiple of k_multiple (all of them for 8)."""
    text = (Path(root) / PUBLIC_LIST).read_text()
    start = re.search(r"\bkShapes\s*=\s*\{", text)
    body = text[start.end():text.index("};", start.end())] if start else ""
    entries = list(PUBLIC_ENTRY.finditer(body))
    if not entries:
        raise ValueError(f"{PUBLIC_LIST}: no shapes found in kShapes")
    shapes = [Shape(entry["name"], int(entry["m"]), int(entry["n"]), int(entry["k"]),
                    PUBLIC_SEED_BASE + index) for index, entry in enumerate(entries)]
    return [shape for shape in shapes if shape.k % k_multiple == 0]


def _multiple_of(rng, low, high, multiple=8):
    return multiple * rng.randint((low + multiple - 1) // multiple, high // multiple)


def _draw(rng, category, index, k_multiple=8):
    """(m, n, k) of one hidden shape of the category."""
    if category == "ragged":  # no dimension a multiple of any tile (64)
        while True:
            m, n, k = (rng.randint(65, 1500), _multiple_of(rng, 72, 1536),
                       _multiple_of(rng, 72, 1536, k_multiple))
            if m % 64 and n % 64 and k % 64:
                return m, n, k
    if category == "tiny":
        return rng.randint(1, 16), _multiple_of(rng, 8, 48), _multiple_of(rng, 8, 64, k_multiple)
    if category == "skinny":  # one of each: few rows, then few columns
        if index % 2 == 0:
            return rng.randint(1, 24), _multiple_of(rng, 1024, 4096), _multiple_of(rng, 256, 2048, k_multiple)
        return rng.randint(1024, 4096), _multiple_of(rng, 8, 40), _multiple_of(rng, 256, 2048, k_multiple)
    if category == "large":
        return (rng.randint(2048, 4096), _multiple_of(rng, 2048, 4096),
                _multiple_of(rng, 1024, 4096, k_multiple))
    raise ValueError(category)


def hidden_shapes(secret, lesson_id, public, k_multiple=8):
    """The hidden shapes of a lesson for this secret (bytes), in HIDDEN_CATEGORIES order, with K a
    multiple of k_multiple."""
    taken = {(shape.m, shape.n, shape.k) for shape in public}
    shapes = []
    index = 0
    for category, count in HIDDEN_CATEGORIES:
        for number in range(count):
            digest = hmac.new(secret, f"lesson{lesson_id:02d}/{index}".encode(), hashlib.sha256).digest()
            rng = random.Random(int.from_bytes(digest, "big"))
            m, n, k = _draw(rng, category, number, k_multiple)
            while (m, n, k) in taken:
                m, n, k = _draw(rng, category, number, k_multiple)
            taken.add((m, n, k))
            shapes.append(Shape(f"{category}_{number + 1}", m, n, k, rng.getrandbits(62), hidden=True))
            index += 1
    return shapes


def quick_hidden(shapes):
    """The first hidden shape of each category but skinny (a quick grade's share)."""
    firsts = {}
    for shape in shapes:
        firsts.setdefault(shape.name.rsplit("_", 1)[0], shape)
    return [firsts[category] for category in ("ragged", "tiny", "large") if category in firsts]
