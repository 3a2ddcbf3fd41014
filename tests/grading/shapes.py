"""The shapes a submission is graded on.

Public: the course's GPU test list (tests/gpu/lesson_shapes_test.cu, kShapes), with its seeds
(1000 + the shape's index, as the GPU test uses).

Hidden: drawn from a secret by public code. HMAC-SHA256 of the secret and "lessonNN/i" seeds a
PRNG for shape i, so the shapes differ per lesson and per secret, nobody without the secret can
predict them, and anyone with it can reproduce them. Every hidden shape satisfies the shape
contract (M >= 1; N, K multiples of 8 and at least 8) and none equals a public shape. A lesson
whose contract asks more of K (lesson 18: K % 16 == 0) gets the public shapes that meet it, and
hidden shapes drawn to meet it.

Fused epilogue: a lesson that computes lesson 15's D = act(alpha * A * B^T + beta * C + bias)
(its lesson.json says `"fused_epilogue": true`) is also graded with it: public runs that pair
cases of the GPU test's kEpilogues with public shapes (FUSED_PUBLIC), and one hidden run per hidden
category, at that category's first shape, whose alpha, beta and activation the secret draws (C and
the bias always read, so that each of them, and the order of the operations, counts).
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
# The GPU test's fused-epilogue cases: {"all_gelu", epilogue(1.5f, 0.5f, true, gemm::Activation::gelu)}.
PUBLIC_EPILOGUE = re.compile(r'\{\s*"(?P<name>\w+)"\s*,\s*epilogue\(\s*(?P<alpha>[-0-9.]+)f?\s*,\s*'
                             r'(?P<beta>[-0-9.]+)f?\s*,\s*(?P<bias>true|false)\s*,\s*'
                             r'gemm::Activation::(?P<activation>\w+)\s*\)\s*\}')
# A fused public run's seed: 2000 + its place in FUSED_PUBLIC (the plain runs take 1000 + i).
FUSED_SEED_BASE = 2000

# The hidden shapes: (category, how many). Their order is fixed: shape i always has the same
# category, so a quick grade that takes the first of each keeps its meaning.
HIDDEN_CATEGORIES = (("ragged", 2), ("tiny", 2), ("skinny", 2), ("large", 2))

# A public subset for quick grades (the GPU validation): one of each kind, and a shape whose every
# tile Stream-K splits along K (lessons 14 and 15 run their Stream-K code only there).
QUICK_PUBLIC = ("ragged_all", "ragged_odd_small", "tiny", "skinny_n", "few_tiles_long_k", "large_4096")
# A quick grade of a lesson whose K must be a multiple of 16 (lesson 18) takes these ragged shapes
# where the two above are not in its list.
QUICK_PUBLIC_K16 = {"ragged_all": "ragged_all_k_16", "ragged_odd_small": "k_16"}

# The fused-epilogue runs on public shapes, (case of kEpilogues, shape): C with beta > 0 and with
# beta < 0, the bias, each activation, a tile that Stream-K cuts into parts (whose fixup comes
# before the epilogue), a tiny and a ragged shape. The first two make up a quick grade's share.
FUSED_PUBLIC = (("all_gelu", "few_tiles_long_k"), ("all_silu", "ragged_odd_small"),
                ("beta_c", "ragged_all"), ("bias_relu", "square_1000"), ("beta_relu", "tiny"))
QUICK_FUSED = 2
# A hidden fused run's activation, per hidden category in HIDDEN_CATEGORIES order (the secret
# draws alpha and beta); every one reads C and the bias.
HIDDEN_FUSED_ACTIVATIONS = ("gelu", "silu", "relu", "none")
HIDDEN_FUSED_ALPHAS = (0.5, 0.75, 1.25, 1.5, 2.0)
HIDDEN_FUSED_BETAS = (-1.0, -0.5, 0.5, 1.0)

# Where performance is measured (paired against the course's solution), and the small ragged
# shape of the sanitizers (`make sanitize` runs every lesson at the K = 272 one).
PERFORMANCE_SHAPES = ((4096, 4096, 4096), (3000, 5000, 4000))
SANITIZER_SHAPE = (200, 136, 264)
# The same for a lesson whose K must be a multiple of 16.
SANITIZER_SHAPE_K16 = (200, 136, 272)
# The ragged shape run twice (bit-identical reruns), for either contract.
RERUN_SHAPES = ("ragged_all", "ragged_all_k_16")


def sanitizer_shape(k_multiple=8):
    return SANITIZER_SHAPE if SANITIZER_SHAPE[2] % k_multiple == 0 else SANITIZER_SHAPE_K16


@dataclasses.dataclass(frozen=True)
class Epilogue:
    """Lesson 15's fused epilogue, as the lesson's flags (--alpha, --beta, --bias, --act)."""
    name: str
    alpha: float = 1.0
    beta: float = 0.0
    bias: bool = False
    activation: str = "none"

    def arguments(self):
        return (["--alpha", f"{self.alpha:g}", "--beta", f"{self.beta:g}", "--act", self.activation]
                + (["--bias"] if self.bias else []))

    def matches(self, reported):
        """Whether the run's JSON report ("epilogue": {alpha, beta, bias, activation}) is this one."""
        reported = reported if isinstance(reported, dict) else {}
        return (reported.get("alpha") == self.alpha and reported.get("beta") == self.beta
                and reported.get("bias") is self.bias and reported.get("activation") == self.activation)

    @property
    def formula(self):
        terms = [f"{self.alpha:g} * A * B^T"]
        if self.beta:
            terms.append(f"{self.beta:g} * C")
        if self.bias:
            terms.append("bias")
        inner = " + ".join(terms).replace("+ -", "- ")
        return inner if self.activation == "none" else f"{self.activation}({inner})"


PLAIN = Epilogue("plain")


@dataclasses.dataclass(frozen=True)
class Shape:
    name: str
    m: int
    n: int
    k: int
    seed: int
    hidden: bool = False
    epilogue: Epilogue = PLAIN

    @property
    def flops(self):
        return 2.0 * self.m * self.n * self.k

    @property
    def size(self):
        return f"{self.m} x {self.n} x {self.k}"

    @property
    def fused(self):
        return self.epilogue != PLAIN

    def describe(self):
        """What a test's name says: the size, the seed and, when fused, the epilogue."""
        fused = f", D = {self.epilogue.formula}" if self.fused else ""
        return f"{self.size}, seed {self.seed}{fused}"

    def arguments(self):
        return (["--m", str(self.m), "--n", str(self.n), "--k", str(self.k), "--seed", str(self.seed)]
                + (self.epilogue.arguments() if self.fused else []))

    def described_by(self, report, lesson_id):
        """(what the report of this run of lesson `lesson_id` must say, what it says instead:
        empty when it describes the run)."""
        expected = {"lesson": lesson_id, "m": self.m, "n": self.n, "k": self.k, "seed": self.seed}
        wrong = {key: report.get(key) for key, value in expected.items() if report.get(key) != value}
        if self.fused and not self.epilogue.matches(report.get("epilogue")):
            expected["epilogue"] = self.epilogue.formula
            wrong["epilogue"] = report.get("epilogue")
        return expected, wrong


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


def public_epilogues(root):
    """{name: Epilogue} of the GPU test's kEpilogues."""
    text = (Path(root) / PUBLIC_LIST).read_text()
    start = re.search(r"\bkEpilogues\s*=\s*\{", text)
    body = text[start.end():text.index("};", start.end())] if start else ""
    cases = {case["name"]: Epilogue(case["name"], float(case["alpha"]), float(case["beta"]),
                                    case["bias"] == "true", case["activation"])
             for case in PUBLIC_EPILOGUE.finditer(body)}
    if not cases:
        raise ValueError(f"{PUBLIC_LIST}: no cases found in kEpilogues")
    return cases


def fused_public(root, public):
    """The fused-epilogue runs on public shapes (FUSED_PUBLIC) whose shape is in `public`."""
    cases = public_epilogues(root)
    by_name = {shape.name: shape for shape in public}
    return [dataclasses.replace(by_name[shape], name=f"{shape}_{case}", seed=FUSED_SEED_BASE + index,
                                epilogue=cases[case])
            for index, (case, shape) in enumerate(FUSED_PUBLIC) if shape in by_name]


def fused_hidden(secret, lesson_id, hidden):
    """One fused run per hidden category, at its first shape, with an epilogue the secret draws."""
    firsts = first_of_each_category(hidden)
    runs = []
    for index, (category, _) in enumerate(HIDDEN_CATEGORIES):
        if category not in firsts:
            continue
        digest = hmac.new(secret, f"lesson{lesson_id:02d}/epilogue/{index}".encode(),
                          hashlib.sha256).digest()
        rng = random.Random(int.from_bytes(digest, "big"))
        activation = HIDDEN_FUSED_ACTIVATIONS[index % len(HIDDEN_FUSED_ACTIVATIONS)]
        epilogue = Epilogue(f"fused_{activation}", rng.choice(HIDDEN_FUSED_ALPHAS),
                            rng.choice(HIDDEN_FUSED_BETAS), True, activation)
        shape = firsts[category]
        runs.append(dataclasses.replace(shape, name=f"{shape.name}_fused", seed=rng.getrandbits(62),
                                        epilogue=epilogue))
    return runs


def quick_public(public):
    """A quick grade's public shapes: QUICK_PUBLIC, with QUICK_PUBLIC_K16's ragged stand-ins for
    those a lesson's contract leaves out of its list."""
    names = {shape.name for shape in public}
    chosen = {name if name in names else QUICK_PUBLIC_K16.get(name) for name in QUICK_PUBLIC}
    return [shape for shape in public if shape.name in chosen]


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


def first_of_each_category(shapes):
    """{category: its first hidden shape} ("ragged_1" is of category "ragged")."""
    firsts = {}
    for shape in shapes:
        firsts.setdefault(shape.name.rsplit("_", 1)[0], shape)
    return firsts


def quick_hidden(shapes):
    """The first hidden shape of each category but skinny (a quick grade's share)."""
    firsts = first_of_each_category(shapes)
    return [firsts[category] for category in ("ragged", "tiny", "large") if category in firsts]


# ---- A lesson that is a layer over GPUs (lesson 19: lesson.json's "runs": "tensor_parallel") ----
#
# Its runs are token counts, each on one GPU, in a number of chunks per rank, every check on and
# no timing: `lessonNN --gpus 1 --tokens T --chunks C --seed S --check-only`. Each run checks the
# layer's four variants and rehearses the copies of every rank count on its GPU. The public runs
# are those of the lesson's own GPU test, each in its own number of chunks; the hidden ones are
# drawn from the secret as the hidden shapes are: one token, an odd count, a count no chunk count
# divides, and a large one, in 2 to 5 chunks.
PUBLIC_TOKEN_RUNS = ((1, 2), (7, 3), (256, 4), (1000, 2))
HIDDEN_TOKEN_CATEGORIES = ("one_token", "odd", "uneven", "large")
# The layer's arithmetic per token (Llama 3.1 8B's MLP, lesson 17: two GEMMs of 4096 x 14336),
# done by four variants and a reference, for a run's time limit.
TOKEN_RUN_FLOPS_PER_TOKEN = 5 * 2 * 2 * 4096 * 14336


@dataclasses.dataclass(frozen=True)
class TokenRun:
    name: str
    tokens: int
    chunks: int
    seed: int
    hidden: bool = False

    @property
    def flops(self):
        return TOKEN_RUN_FLOPS_PER_TOKEN * self.tokens

    def describe(self):
        return f"{self.tokens} token(s) in {self.chunks} chunk(s) per rank, one GPU, seed {self.seed}"

    def arguments(self):
        return ["--gpus", "1", "--tokens", str(self.tokens), "--chunks", str(self.chunks),
                "--seed", str(self.seed), "--check-only"]

    def described_by(self, report, lesson_id):
        """As Shape.described_by, for the report `lessonNN --result-file` writes of a layer."""
        expected = {"lesson": lesson_id, "gpus": 1, "tokens": [self.tokens], "chunks": self.chunks,
                    "seed": self.seed}
        return expected, {key: report.get(key) for key, value in expected.items()
                          if report.get(key) != value}


def public_token_runs():
    return [TokenRun(f"tokens_{tokens}_chunks_{chunks}", tokens, chunks, PUBLIC_SEED_BASE + index)
            for index, (tokens, chunks) in enumerate(PUBLIC_TOKEN_RUNS)]


def _draw_tokens(rng, category, chunks):
    if category == "one_token":
        return 1
    if category == "odd":
        return 2 * rng.randint(4, 127) + 1
    if category == "uneven":  # no rank count times this chunk count divides it
        while True:
            tokens = rng.randint(257, 2047)
            if all(tokens % (gpus * chunks) for gpus in (2, 4, 7, 8, 14, 16)):
                return tokens
    if category == "large":
        return rng.randint(2048, 4096)
    raise ValueError(category)


def hidden_token_runs(secret, lesson_id):
    """The hidden runs of a tensor-parallel lesson for this secret (bytes), one per category of
    HIDDEN_TOKEN_CATEGORIES, none equal to a public run."""
    taken = set(PUBLIC_TOKEN_RUNS)
    runs = []
    for index, category in enumerate(HIDDEN_TOKEN_CATEGORIES):
        digest = hmac.new(secret, f"lesson{lesson_id:02d}/tokens/{index}".encode(), hashlib.sha256).digest()
        rng = random.Random(int.from_bytes(digest, "big"))
        while True:
            chunks = rng.randint(2, 5)
            tokens = _draw_tokens(rng, category, chunks)
            if (tokens, chunks) not in taken:
                break
        taken.add((tokens, chunks))
        runs.append(TokenRun(f"{category}_{tokens}_chunks_{chunks}", tokens, chunks,
                             rng.getrandbits(62), hidden=True))
    return runs
