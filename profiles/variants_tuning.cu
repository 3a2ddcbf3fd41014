// Lesson 15's configurations: the tuning grid behind its README (profiles/variants.hpp): its tile
// with other stage counts, epilogue buffers and raster groups. Each variant is the plain product
// (the fused epilogue only changes the epilogue's arithmetic), in the final kernel with lesson 15's
// epilogue (its common copy).
#include "profiles/variants.hpp"

#include "common/hopper/epilogue_tma_store.hpp"
#include "common/hopper/gemm_kernel.cuh"
#include "common/hopper/mainloop_bf16.hpp"
#include "lessons/registry.hpp"

namespace sweep {
namespace {

// Lesson 15's kernel with <Stages> stages and <Buffers> subtile buffers per consumer.
template <int Stages, int Buffers>
using Tuned = gemm::hopper::Configured<gemm::hopper::Kernel<
    gemm::hopper::KernelTile<128, 256, 2, Stages, gemm::hopper::ConsumerKind::cooperative, 64,
                             Buffers>,
    gemm::hopper::Bf16Mainloop,
    gemm::taught::TmaStoreEpilogue<
        gemm::hopper::KernelTile<128, 256, 2, Stages, gemm::hopper::ConsumerKind::cooperative, 64,
                                 Buffers>,
        gemm::hopper::PlainEpilogue>>>;

// Its plan (lesson 14's Stream-K rule) and its launch in raster groups of Group.
template <int Stages, int Buffers>
gemm::LaunchPlan tuned_plan(const gemm::GemmProblem& problem, int) {
  using C = Tuned<Stages, Buffers>;
  const gemm::StreamKPlan schedule = C::schedule(problem, gemm::kStreamKMinIterations);
  return {-1, schedule, C::workspace_bytes(schedule), C::workspace_flag_bytes(schedule)};
}
template <int Stages, int Buffers, int Group>
void tuned_launch(const gemm::GemmArgs& args, const gemm::LaunchPlan& plan, cudaStream_t stream) {
  Tuned<Stages, Buffers>::launch(args, plan.schedule, stream, Group);
}

template <int Stages, int Buffers, int Group>
Variant tuning(const char* name, bool is_default) {
  gemm::Lesson lesson = gemm::lessons::lesson15();
  lesson.fused_epilogue = false;
  lesson.plan = &tuned_plan<Stages, Buffers>;
  lesson.launch_planned = &tuned_launch<Stages, Buffers, Group>;
  return {"tuning_15", name, is_default, lesson};
}

}  // namespace

std::vector<Variant> tuning_variants() {
  return {
      tuning<4, 2, 8>("lesson15 stages=4 buffers=2 group=8", true),
      tuning<4, 1, 8>("lesson15 stages=4 buffers=1 group=8", false),
      tuning<3, 2, 8>("lesson15 stages=3 buffers=2 group=8", false),
      tuning<4, 2, 4>("lesson15 stages=4 buffers=2 group=4", false),
      tuning<4, 2, 16>("lesson15 stages=4 buffers=2 group=16", false),
  };
}

}  // namespace sweep
