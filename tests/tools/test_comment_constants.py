"""Tests that the numbers the lessons' comments quote agree with the constants they describe.

Comments drift when code changes under them (a register budget changed from 40/232 to 56/224 while
the comments kept the old pair). Where a comment quotes a value that the code defines, this test
recomputes it from the code:

  - `kName = 123` in a comment, where the same file defines `constexpr int kName = 123;`;
  - `(gemm::hopper::consumer_registers: N)`: setmaxnreg's budget of the lesson, from its threads per
    block, blocks per SM and producer registers, as common/hopper/tile_shape.hpp computes it;
  - `N registers per thread at launch`: the launch bounds' share of the 65536 registers.

Elsewhere the comments name the constant instead of repeating its value.
"""
import re
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
KERNELS = sorted((REPOSITORY / "lessons").glob("*/kernel.cuh"))

CONSTANT = re.compile(r"constexpr int (k\w+) = (\d+);")
QUOTED_CONSTANT = re.compile(r"//.*?\b(k\w+) = (\d+)\b")
QUOTED_BUDGET = re.compile(r"gemm::hopper::consumer_registers: (\d+)\)")
QUOTED_LAUNCH = re.compile(r"= (\d+) registers per thread at launch")
TILE_SHAPE = re.compile(r"gemm::hopper::TileShape<\d+, \d+, \w+, /\*Consumers=\*/(\d+)")
REGISTERS_PER_SM = 65536


def registers_at_launch(threads, blocks_per_sm):
    return REGISTERS_PER_SM // (threads * blocks_per_sm) // 8 * 8


def consumer_registers(threads, blocks_per_sm, producer_registers):
    block = registers_at_launch(threads, blocks_per_sm) * threads
    return (block - 128 * producer_registers) // (threads - 128) // 8 * 8


def threads_per_block(text):
    """The block's threads: three warpgroups for lesson 11's ping-pong, else the producer and the
    consumers of its DefaultTile."""
    constants = dict(CONSTANT.findall(text))
    if "kPingPongConsumers" in constants:
        return (1 + int(constants["kPingPongConsumers"])) * 128
    default = re.search(r"using DefaultTile = (.*?);", text, re.DOTALL)
    consumers = TILE_SHAPE.search(text[default.start():]) if default else None
    if consumers is None:  # lesson 15: its TileShape derives from the common one
        consumers = TILE_SHAPE.search(text)
    return (1 + int(consumers[1])) * 128


class CommentConstants(unittest.TestCase):
    def test_quoted_constants_match_their_definitions(self):
        for kernel in KERNELS:
            text = kernel.read_text()
            defined = dict(CONSTANT.findall(text))
            for name, value in QUOTED_CONSTANT.findall(text):
                if name in defined:
                    with self.subTest(kernel=kernel.parent.name, constant=name):
                        self.assertEqual(value, defined[name],
                                         f"a comment says {name} = {value}, the code {defined[name]}")

    def test_quoted_register_budgets_match_the_code(self):
        checked = 0
        for kernel in KERNELS:
            text = kernel.read_text()
            constants = dict(CONSTANT.findall(text))
            if "kProducerRegisters" not in constants:
                continue
            threads = threads_per_block(text)
            blocks = int(constants["kBlocksPerSm"])
            producer = int(constants["kProducerRegisters"])
            for quoted in QUOTED_BUDGET.findall(text):
                with self.subTest(kernel=kernel.parent.name, budget=quoted):
                    self.assertEqual(int(quoted), consumer_registers(threads, blocks, producer))
                    checked += 1
            for quoted in QUOTED_LAUNCH.findall(text):
                with self.subTest(kernel=kernel.parent.name, at_launch=quoted):
                    self.assertEqual(int(quoted), registers_at_launch(threads, blocks))
        if KERNELS and any("kProducerRegisters" in kernel.read_text() for kernel in KERNELS):
            self.assertGreater(checked, 0, "no register budget quoted anywhere: is the pattern stale?")

    def test_the_budget_arithmetic_agrees_with_the_header(self):
        # The values tests/host/hopper_blocks_test.cpp checks for the C++ function.
        self.assertEqual(consumer_registers(256, 2, 40), 216)
        self.assertEqual(consumer_registers(384, 1, 40), 232)
        self.assertEqual(consumer_registers(384, 1, 56), 224)


if __name__ == "__main__":
    unittest.main()
