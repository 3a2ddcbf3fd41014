#pragma once
// The kinds of workload the course ships (common/workloads/workload.hpp), as lesson.json names
// them in "operands": a lesson entry points at one (Lesson::workload).

namespace gemm {

struct WorkloadKind;

namespace workloads {
extern const WorkloadKind kind_bf16;               // dense bf16 A and B (lessons 01-17)
extern const WorkloadKind kind_e4m3_block_scaled;  // e4m3 with 1x128 / 128x128 scales (lesson 18)
}  // namespace workloads

}  // namespace gemm
