#include "lessons/registry.hpp"

#include "lessons/01_naive/kernel.cuh"
#include "lessons/02_smem_tiling/kernel.cuh"
#include "lessons/03_tensor_cores/kernel.cuh"
#include "lessons/04_swizzled_smem/kernel.cuh"
#include "lessons/05_cp_async_pipeline/kernel.cuh"
#include "lessons/06_fragment_interleaving/kernel.cuh"
#include "lessons/07_wgmma/kernel.cuh"
#include "lessons/08_tma_mbarrier/kernel.cuh"
#include "lessons/09_warp_specialization/kernel.cuh"
#include "lessons/10_cooperative/kernel.cuh"
#include "lessons/11_pingpong/kernel.cuh"
#include "lessons/12_cluster_multicast/kernel.cuh"
#include "lessons/13_persistent_raster/kernel.cuh"
#include "lessons/14_stream_k/kernel.cuh"
#include "lessons/15_tma_store_epilogue/kernel.cuh"
#include "lessons/16_shape_heuristics/kernel.cuh"
#include "lessons/17_dependent_launch/kernel.cuh"
#include "lessons/18_fp8_block_scaled/kernel.cuh"

namespace gemm {

const std::vector<Lesson>& all_lessons() {
  static const std::vector<Lesson> lessons = {
      lesson01::kLesson,
      lesson02::kLesson,
      lesson03::kLesson,
      lesson04::kLesson,
      lesson05::kLesson,
      lesson06::kLesson,
      lesson07::kLesson,
      lesson08::kLesson,
      lesson09::kLesson,
      lesson10::kLesson,
      lesson11::kLesson,
      lesson12::kLesson,
      lesson13::kLesson,
      lesson14::kLesson,
      lesson15::kLesson,
      lesson16::kLesson,
      lesson17::kLesson,
      lesson18::kLesson,
  };
  return lessons;
}

const Lesson* find_lesson(int id) {
  for (const Lesson& lesson : all_lessons())
    if (lesson.id == id) return &lesson;
  return nullptr;
}

}  // namespace gemm
