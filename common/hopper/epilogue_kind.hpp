#pragma once
/// What the final kernel's epilogue computes (lesson 15), chosen at compile time, so that the plain
/// product pays for none of the fused one:
///   PlainEpilogue            D = A * B^T
///   FusedEpilogue            D = act(alpha * A * B^T + beta * C + bias), with beta * C and the
///                            bias read only when the launch has them, and the activation chosen
///                            by the launch (run-time choices, the same for every thread)
/// and the host's choice of kind for a launch's gemm::Epilogue (with_epilogue_kind).

#include <utility>

#include "common/gemm.hpp"

namespace gemm::hopper {

template <bool Fused>
struct EpilogueKind {
  static constexpr bool kFused = Fused;
};
using PlainEpilogue = EpilogueKind<false>;
using FusedEpilogue = EpilogueKind<true>;

/// Calls f.template operator()<Kind>() with the kind that computes `epilogue`: the plain one for
/// the plain product, otherwise the fused one. Both kinds are instantiated where this is called:
/// two kernels per configuration. (One fused kernel per activation would be four: four times the
/// compile time of the fused kernels, for a branch per output that is the same in every thread
/// and costs next to nothing beside the tile's MMAs.)
template <class Function>
void with_epilogue_kind(const Epilogue& epilogue, Function&& f) {
  if (epilogue.is_plain()) return f.template operator()<PlainEpilogue>();
  return f.template operator()<FusedEpilogue>();
}

}  // namespace gemm::hopper
