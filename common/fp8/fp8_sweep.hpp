#pragma once
// `lesson18 sweep`: the measurements of lesson 18's README in one run. For every shape of a set:
//   - lesson 18 checked against the fp32 product of its dequantized operands (the error in units
//     of the allowed error: <= 1 passes);
//   - what lesson 18's and lesson 16's outputs lose against the fp32 product of the bf16 inputs
//     that both start from (relative rms error): the accuracy that fp8 costs;
//   - lesson 18 paired with cuBLASLt's block-scaled fp8, its per-tensor fp8 and lesson 16 (bf16),
//     and the quantization of A and B timed apart;
//   - each of lesson 18's configurations alone against cuBLASLt's block-scaled fp8 (or per-tensor
//     where block scaling does not take the shape): what the cost model's choice leaves.
//
//   lesson18 sweep [--shapes standard|workloads|4096,8192x8192x1024] [--alone yes|no]
//                  [--csv FILE] [--commit SHA]

#include "common/lesson.hpp"

namespace gemm {

// `lesson18 sweep ...` (argv[1] is "sweep"), with lesson 18 (`lesson`) and lesson 16
// (`bf16_lesson`). Returns the exit code (gemm::ExitCode).
int run_fp8_sweep_command(const Lesson& lesson, const Lesson& bf16_lesson, int argc, char** argv);

}  // namespace gemm
