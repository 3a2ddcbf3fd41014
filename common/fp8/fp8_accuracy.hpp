#pragma once
// `lesson18 accuracy`: what the promotion buys. The tensor cores add fp8 products into their
// accumulator with about 14 bits (lesson 18's README); summed that way over all of K, the error
// grows with K, and promoted to fp32 every 128 values of K it should not. For each K of a list,
// on one M x N and the inputs of lesson 18's workload, the relative rms error of D,
// sqrt(sum (d - ref)^2 / sum ref^2), against the product of the values its operands stand for
// (e4m3 value times scale), computed by cuBLAS in fp32, of:
//   - lesson 18 (1 x 128 and 128 x 128 scales, promoted every 128 values of K);
//   - cuBLASLt's block-scaled fp8 (where it takes the shape: M % 4 == 0);
//   - cuBLASLt's per-tensor fp8 with its sums promoted (fast accumulation off), and without
//     (fast accumulation on: the tensor cores' own sums over all of K).
// D is bf16 in all four, whose rounding alone (half a unit in the last of its 8 bits) costs about
// 1.6e-3 on these inputs: the floor that every column of the table sits on.
//
//   lesson18 accuracy [--m M] [--n N] [--ks 256,1024,4096,16384,65536] [--csv FILE] [--commit SHA]

#include "common/lesson.hpp"

namespace gemm {

// `lesson18 accuracy ...` (argv[1] is "accuracy") with lesson 18 (`lesson`). Returns the exit code
// (gemm::ExitCode).
int run_fp8_accuracy_command(const Lesson& lesson, int argc, char** argv);

}  // namespace gemm
