// EpilogueReference, what lesson 15 is checked and timed against, checked itself against fp64 on
// the CPU: every activation, with and without bias, beta 0 and 0.5, alpha 1 and 1.5, on small and
// ragged shapes, in both output types. And the comparison must be able to fail: a wrong
// activation, a missing bias and stale inputs are each caught.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/harness/random.hpp"
#include "common/harness/verify.hpp"
#include "common/references/epilogue_reference.hpp"
#include "common/references/reference.hpp"

namespace {

using gemm::Activation;
using gemm::bf16;
using gemm::DeviceBuffer;
using gemm::Epilogue;
using gemm::EpilogueReference;
using gemm::GemmProblem;
using gemm::VerifyReport;

// A stream of its own for each test: nothing here needs the lesson runner.
class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreate(&stream_)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

std::vector<float> download_as_float(const bf16* device, size_t count) {
  std::vector<bf16> values(count);
  CUDA_CHECK(cudaMemcpy(values.data(), device, count * sizeof(bf16), cudaMemcpyDeviceToHost));
  std::vector<float> widened(count);
  for (size_t i = 0; i < count; ++i) widened[i] = __bfloat162float(values[i]);
  return widened;
}

// Random device inputs of one problem (A, B, C and a bias, all in [-1, 1]), the host values of
// C and the bias, and the fp64 product A * B^T that every epilogue starts from.
struct Inputs {
  Inputs(const GemmProblem& shape, uint64_t seed, cudaStream_t stream)
      : problem(shape),
        a(size_t(shape.m * shape.k)),
        b(size_t(shape.n * shape.k)),
        c(size_t(shape.m * shape.n)),
        bias(size_t(shape.n)) {
    gemm::fill_uniform(a.get(), a.size(), seed, stream);
    gemm::fill_uniform(b.get(), b.size(), seed + 1, stream);
    refill(seed + 2, stream);
    product = gemm::cpu_gemm_fp64(download_as_float(a.get(), a.size()),
                                  download_as_float(b.get(), b.size()), problem);
  }

  // New values for C and the bias, in the same buffers.
  void refill(uint64_t seed, cudaStream_t stream) {
    gemm::fill_uniform(c.get(), c.size(), seed, stream);
    gemm::fill_uniform(bias.get(), bias.size(), seed + 1, stream);
    c_host = download_as_float(c.get(), c.size());
    bias_host = download_as_float(bias.get(), bias.size());
  }

  GemmProblem problem;
  DeviceBuffer<bf16> a, b, c, bias;
  std::vector<float> c_host, bias_host;
  std::vector<double> product;
};

Epilogue make_epilogue(const Inputs& inputs, Activation activation, bool with_bias, float alpha,
                       float beta) {
  Epilogue epilogue;
  epilogue.alpha = alpha;
  epilogue.beta = beta;
  // C is handed over only when it is read, so that beta == 0 also runs without one.
  epilogue.c = beta != 0.0f ? inputs.c.get() : nullptr;
  epilogue.bias = with_bias ? inputs.bias.get() : nullptr;
  epilogue.activation = activation;
  return epilogue;
}

// The fp64 epilogue on the CPU, with the bias values the epilogue says it has.
std::vector<double> expected_output(const Inputs& inputs, const Epilogue& epilogue,
                                    const std::vector<float>& bias_values) {
  return gemm::cpu_epilogue_fp64(inputs.product, inputs.problem, epilogue, inputs.c_host,
                                 epilogue.bias ? bias_values : std::vector<float>{});
}

// Runs the reference into a freshly poisoned D and returns D as bf16: the bf16 output as it is,
// the fp32 output rounded to nearest, so that both go through the course's rule the same way.
// The poison (all bits set: a NaN in fp32, gemm::kPoisonBits in bf16) makes an element the
// reference never wrote fail the comparison.
std::vector<bf16> run_reference(EpilogueReference& reference, const Inputs& inputs,
                                const Epilogue& epilogue, cudaDataType_t d_type,
                                cudaStream_t stream) {
  const size_t count = size_t(inputs.problem.m * inputs.problem.n);
  const size_t element_bytes = d_type == CUDA_R_32F ? sizeof(float) : sizeof(bf16);
  DeviceBuffer<unsigned char> d(count * element_bytes);
  CUDA_CHECK(cudaMemsetAsync(d.get(), 0xFF, d.bytes(), stream));
  reference.run(inputs.problem, inputs.a.get(), inputs.b.get(), epilogue, d.get(), d_type, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  std::vector<bf16> output(count);
  if (d_type == CUDA_R_16BF) {
    CUDA_CHECK(cudaMemcpy(output.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost));
    return output;
  }
  std::vector<float> wide(count);
  CUDA_CHECK(cudaMemcpy(wide.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < count; ++i) output[i] = __float2bfloat16(wide[i]);
  return output;
}

std::string describe_case(const Epilogue& epilogue, cudaDataType_t d_type) {
  return EpilogueReference::describe(epilogue) + ", alpha " + std::to_string(epilogue.alpha) +
         ", beta " + std::to_string(epilogue.beta) + ", " +
         (d_type == CUDA_R_32F ? "fp32" : "bf16") + " output";
}

struct Shape {
  const char* name;
  GemmProblem problem;
};

// A square tile multiple, ragged M / N / K, the smallest shape the contract allows, a small odd
// one, and one large enough that cuBLASLt picks a real tiled kernel.
const std::vector<Shape> kShapes = {
    {"square_64", {64, 64, 64}},
    {"ragged_all", {333, 136, 264}},
    {"tiny", {1, 8, 8}},
    {"ragged_odd_small", {17, 24, 40}},
    {"rectangular", {256, 512, 192}},
};

// Test names are "EpilogueReference/EpilogueShapes.EveryEpilogueMatchesFp64/ragged_all", so that
// --gtest_filter=EpilogueReference* runs them with the tests below.
class EpilogueShapes : public testing::TestWithParam<size_t> {};

TEST_P(EpilogueShapes, EveryEpilogueMatchesFp64) {
  const Shape& shape = kShapes[GetParam()];
  Stream stream;
  EpilogueReference reference;
  const Inputs inputs(shape.problem, /*seed=*/100 + 10 * GetParam(), stream);

  for (Activation activation :
       {Activation::none, Activation::relu, Activation::gelu, Activation::silu})
    for (bool with_bias : {false, true})
      for (float beta : {0.0f, 0.5f})
        for (float alpha : {1.0f, 1.5f}) {
          const Epilogue epilogue = make_epilogue(inputs, activation, with_bias, alpha, beta);
          const std::vector<double> expected = expected_output(inputs, epilogue, inputs.bias_host);
          for (cudaDataType_t d_type : {CUDA_R_32F, CUDA_R_16BF}) {
            SCOPED_TRACE(describe_case(epilogue, d_type));
            const VerifyReport report =
                gemm::verify_on_host(run_reference(reference, inputs, epilogue, d_type, stream), expected);
            EXPECT_TRUE(report.passed()) << report.summary(shape.problem.n);
          }
        }
}

INSTANTIATE_TEST_SUITE_P(EpilogueReference, EpilogueShapes, testing::Range<size_t>(0, kShapes.size()),
                         [](const testing::TestParamInfo<size_t>& info) {
                           return std::string(kShapes[info.param].name);
                         });

TEST(EpilogueReference, FusedWhereCublasLtHasTheEpilogue) {
  EXPECT_TRUE(EpilogueReference::fused(Activation::none));
  EXPECT_TRUE(EpilogueReference::fused(Activation::relu));
  EXPECT_TRUE(EpilogueReference::fused(Activation::gelu));
  EXPECT_FALSE(EpilogueReference::fused(Activation::silu));
}

TEST(EpilogueReference, DescribeNamesWhatRuns) {
  // describe() only looks at whether there is a bias, never at what the pointer points to.
  const bf16 some_bias{};
  Epilogue epilogue;
  EXPECT_EQ(EpilogueReference::describe(epilogue), "cuBLASLt DEFAULT epilogue");
  epilogue.bias = &some_bias;
  EXPECT_EQ(EpilogueReference::describe(epilogue), "cuBLASLt BIAS epilogue");
  epilogue.activation = Activation::relu;
  EXPECT_EQ(EpilogueReference::describe(epilogue), "cuBLASLt RELU_BIAS epilogue");
  epilogue.activation = Activation::gelu;
  EXPECT_EQ(EpilogueReference::describe(epilogue), "cuBLASLt GELU_BIAS epilogue");
  epilogue.bias = nullptr;
  EXPECT_EQ(EpilogueReference::describe(epilogue), "cuBLASLt GELU epilogue");
  epilogue.activation = Activation::silu;
  EXPECT_EQ(EpilogueReference::describe(epilogue), "cuBLASLt + elementwise SiLU");
}

// The comparison above must be able to fail: the right output against the wrong expectation.
TEST(EpilogueReference, AWrongActivationOrAMissingBiasIsCaught) {
  Stream stream;
  EpilogueReference reference;
  const Inputs inputs(GemmProblem{64, 64, 64}, /*seed=*/7, stream);
  for (cudaDataType_t d_type : {CUDA_R_32F, CUDA_R_16BF}) {
    SCOPED_TRACE(d_type == CUDA_R_32F ? "fp32 output" : "bf16 output");
    const Epilogue gelu = make_epilogue(inputs, Activation::gelu, /*with_bias=*/true, 1.0f, 0.0f);
    const std::vector<bf16> got = run_reference(reference, inputs, gelu, d_type, stream);
    ASSERT_TRUE(gemm::verify_on_host(got, expected_output(inputs, gelu, inputs.bias_host)).passed());

    const Epilogue relu = make_epilogue(inputs, Activation::relu, /*with_bias=*/true, 1.0f, 0.0f);
    EXPECT_FALSE(gemm::verify_on_host(got, expected_output(inputs, relu, inputs.bias_host)).passed());
    const Epilogue no_bias = make_epilogue(inputs, Activation::gelu, /*with_bias=*/false, 1.0f, 0.0f);
    EXPECT_FALSE(gemm::verify_on_host(got, expected_output(inputs, no_bias, inputs.bias_host)).passed());
  }
}

// The plans are cached, the inputs are not: new values in the same buffers, and another bias
// buffer for the same shape, must show up in the next call's output.
TEST(EpilogueReference, NewInputValuesAreUsedByTheNextCall) {
  Stream stream;
  EpilogueReference reference;
  Inputs inputs(GemmProblem{96, 128, 64}, /*seed=*/21, stream);
  DeviceBuffer<bf16> other_bias(size_t(inputs.problem.n));
  gemm::fill_uniform(other_bias.get(), other_bias.size(), /*seed=*/99, stream);
  const std::vector<float> other_bias_host = download_as_float(other_bias.get(), other_bias.size());
  uint64_t next_seed = 500;

  for (Activation activation : {Activation::gelu, Activation::silu})
    for (cudaDataType_t d_type : {CUDA_R_32F, CUDA_R_16BF}) {
      const Epilogue epilogue = make_epilogue(inputs, activation, /*with_bias=*/true, 1.0f, 0.5f);
      SCOPED_TRACE(describe_case(epilogue, d_type));
      const VerifyReport first = gemm::verify_on_host(
          run_reference(reference, inputs, epilogue, d_type, stream),
          expected_output(inputs, epilogue, inputs.bias_host));
      EXPECT_TRUE(first.passed()) << first.summary(inputs.problem.n);

      inputs.refill(next_seed, stream);
      next_seed += 2;  // refill uses two seeds, one for C and one for the bias
      const VerifyReport refilled = gemm::verify_on_host(
          run_reference(reference, inputs, epilogue, d_type, stream),
          expected_output(inputs, epilogue, inputs.bias_host));
      EXPECT_TRUE(refilled.passed()) << "after new values in C and bias: "
                                     << refilled.summary(inputs.problem.n);

      Epilogue with_other_bias = epilogue;
      with_other_bias.bias = other_bias.get();
      const VerifyReport switched = gemm::verify_on_host(
          run_reference(reference, inputs, with_other_bias, d_type, stream),
          expected_output(inputs, with_other_bias, other_bias_host));
      EXPECT_TRUE(switched.passed()) << "after switching to another bias buffer: "
                                     << switched.summary(inputs.problem.n);
    }
}

TEST(EpilogueReference, RejectsBadArguments) {
  Stream stream;
  EpilogueReference reference;
  const Inputs inputs(GemmProblem{16, 16, 16}, /*seed=*/5, stream);
  DeviceBuffer<float> d(size_t(16 * 16));

  Epilogue beta_without_c;
  beta_without_c.beta = 0.5f;
  EXPECT_THROW(reference.run(inputs.problem, inputs.a.get(), inputs.b.get(), beta_without_c,
                             d.get(), CUDA_R_32F, stream),
               std::invalid_argument);
  EXPECT_THROW(reference.run(inputs.problem, inputs.a.get(), inputs.b.get(), Epilogue{}, d.get(),
                             CUDA_R_16F, stream),
               std::invalid_argument);
}

}  // namespace
