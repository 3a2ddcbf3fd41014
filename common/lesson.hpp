#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

#include <cuda_runtime_api.h>

#include "common/exercise.hpp"  // the stub of an exercise region a hand-out leaves to write
#include "common/gemm.hpp"

namespace gemm {

// The compute capability a lesson needs.
enum class MinArch {
  sm80,   // mma.sync, ldmatrix, cp.async: any GPU from Ampere on (lessons 01-06)
  sm90a,  // wgmma, TMA, setmaxnreg: Hopper's arch-specific target, compute capability 9.0 only
};

// Everything the harness, the tests, the benchmark and the grader need to know about a lesson.
// Each lesson defines one of these next to its kernel (lessonNN::kLesson) and lists it in the
// registry (lessons/registry.cu).
struct Lesson {
  int id;             // 1..15
  int parent;         // the lesson whose kernel this one starts from (`make diff`); 0 for lesson 01
  const char* slug;   // folder name without the number, e.g. "smem_tiling"
  const char* title;  // one line: what the lesson adds
  void (*launch)(const GemmArgs& args, cudaStream_t stream);
  size_t (*workspace_bytes)(const GemmProblem& problem);  // nullptr: the lesson needs none
  MinArch min_arch;
  // The workspace must be all zeros when a launch starts (Stream-K's flags): the harness zeroes it
  // before every launch, outside every timed region ...
  bool zeroed_workspace = false;
  // ... unless the lesson leaves it zeroed itself (lesson 15: the last part of a tile resets the
  // tile's flag). Then the harness zeroes it only when it allocates it or something else has
  // written into it, and every launch a caller makes costs what the timing measures.
  bool workspace_resets_itself = false;
  // The lesson computes lesson 15's fused epilogue (alpha, beta * C, bias, activation). Lessons
  // without it are only ever handed the plain product (Epilogue::is_plain()).
  bool fused_epilogue = false;
};

// "lesson07": the name of the executable, the ctest prefix and the kernel namespace.
inline std::string lesson_name(const Lesson& lesson) {
  char name[16];
  std::snprintf(name, sizeof(name), "lesson%02d", lesson.id);
  return name;
}

}  // namespace gemm
