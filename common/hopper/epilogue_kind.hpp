#pragma once
/// What the final kernel's epilogue computes (lesson 15), chosen at compile time, so that the plain
/// product pays for none of the fused one:
///   PlainEpilogue            D = A * B^T
///   FusedEpilogue<Act>       D = act(alpha * A * B^T + beta * C + bias), with beta * C and the
///                            bias read only when the launch has them (a run-time choice, the same
///                            for every thread)
/// and the host's choice of kind for a launch's gemm::Epilogue (with_epilogue_kind).

#include <utility>

#include "common/gemm.hpp"

namespace gemm::hopper {

template <bool Fused, Activation Act = Activation::none>
struct EpilogueKind {
  static constexpr bool kFused = Fused;
  static constexpr Activation kActivation = Act;
};
using PlainEpilogue = EpilogueKind<false>;
template <Activation Act>
using FusedEpilogue = EpilogueKind<true, Act>;

/// Calls f.template operator()<Kind>() with the kind that computes `epilogue`: the plain one for
/// the plain product, otherwise the fused one with the activation compiled in. Every kind a
/// launch may need is instantiated where this is called.
template <class Function>
void with_epilogue_kind(const Epilogue& epilogue, Function&& f) {
  if (epilogue.is_plain()) return f.template operator()<PlainEpilogue>();
  switch (epilogue.activation) {
    case Activation::none: return f.template operator()<FusedEpilogue<Activation::none>>();
    case Activation::relu: return f.template operator()<FusedEpilogue<Activation::relu>>();
    case Activation::gelu: return f.template operator()<FusedEpilogue<Activation::gelu>>();
    case Activation::silu: return f.template operator()<FusedEpilogue<Activation::silu>>();
  }
}

}  // namespace gemm::hopper
