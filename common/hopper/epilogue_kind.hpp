#pragma once
/// What the final kernel's epilogue computes (lesson 15), chosen at compile time, so that the plain
/// product pays for none of the fused one:
///   PlainEpilogue            D = A * B^T
///   FusedEpilogue<Gated>     D = act(alpha * A * B^T + beta * C + bias), with beta * C and the
///                            bias read only when the launch has them (run-time choices, the same
///                            for every thread), and act one of its kind's activations
///                            (common/activation.hpp): none or ReLU (Gated = false), GELU or SiLU
///                            (Gated = true), the launch's a value of that kind
/// and the host's choice of kind for a launch's gemm::Epilogue (with_epilogue_kind).

#include <utility>

#include "common/activation.hpp"
#include "common/gemm.hpp"

namespace gemm::hopper {

template <bool Fused, bool Gated = false>
struct EpilogueKind {
  static constexpr bool kFused = Fused;
  static constexpr bool kGated = Gated;
};
using PlainEpilogue = EpilogueKind<false>;
template <bool Gated>
using FusedEpilogue = EpilogueKind<true, Gated>;

/// Calls f.template operator()<Kind>() with the kind that computes `epilogue`: the plain one for
/// the plain product, otherwise the fused one of its activation's kind. The three kinds are
/// instantiated where this is called: three kernels per configuration. (One per activation would
/// be five, each with its own main loop, for no instruction fewer; one fused kernel that chose
/// its activation with a branch per output ran 1-25% longer than these: lesson 15's README.)
template <class Function>
void with_epilogue_kind(const Epilogue& epilogue, Function&& f) {
  if (epilogue.is_plain()) return f.template operator()<PlainEpilogue>();
  if (is_gated(epilogue.activation)) return f.template operator()<FusedEpilogue<true>>();
  return f.template operator()<FusedEpilogue<false>>();
}

}  // namespace gemm::hopper
