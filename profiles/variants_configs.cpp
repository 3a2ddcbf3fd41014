// Lesson 16's compiled configurations, each run alone (as `--config NAME` runs it): the oracle
// sweep that its cost model is judged against (profiles/shape_model_report.cpp reads the CSV).
#include "lessons/registry.hpp"
#include "profiles/variants.hpp"

namespace sweep {

std::vector<Variant> configuration_variants() {
  std::vector<Variant> variants;
  const gemm::Lesson& lesson = gemm::lessons::lesson16();
  for (int i = 0; i < lesson.configuration_count; ++i)
    variants.push_back({"configs_16", lesson.configurations[i].name, /*is_default=*/false,
                        gemm::with_configuration(lesson, i)});
  return variants;
}

}  // namespace sweep
