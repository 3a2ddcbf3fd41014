// Lesson 18's inputs and check: the quantizer (scales, saturation at 448, rounding), the spread of
// the inputs' scales, and a check that fails when a scale is wrong. The lesson's kernel on every
// shape of the list is in lesson_shapes_test.cu (ctest lesson18.gpu).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/fp8/fp8_block_scaling.hpp"
#include "common/harness/random.hpp"
#include "common/workloads/block_scaled_e4m3.hpp"
#include "lessons/registry.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace {

using gemm::bf16;
using gemm::BlockScaledOperands;
using gemm::e4m3;
using gemm::GemmProblem;

template <class T>
std::vector<T> download(const T* data, size_t count) {
  std::vector<T> host(count);
  CUDA_CHECK(cudaMemcpy(host.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

// The quantizer against a CPU model of it, on a ragged matrix with blocks of very different
// magnitudes, one of them far beyond e4m3's range: every scale is its block's amax / 448, every
// value the nearest e4m3 of value / scale, and each block's largest value lands on +-448 exactly.
TEST(BlockScaling, QuantizerMatchesItsDefinition) {
  const GemmProblem p{136, 264, 400};  // ragged in both blocks' directions, K % 128 != 0
  cudaStream_t stream = gpu_test_support::shared_runner().stream();
  gemm::DeviceBuffer<bf16> a(size_t(p.m * p.k)), b(size_t(p.n * p.k));
  gemm::fill_uniform(a.get(), a.size(), 5, stream);
  gemm::fill_uniform(b.get(), b.size(), 6, stream);
  gemm::spread_block_magnitudes(a.get(), p.m, p.k, 1, 7, stream);
  gemm::spread_block_magnitudes(b.get(), p.n, p.k, 128, 8, stream);
  // A block far past e4m3's range: its scale must bring it back, not saturate it.
  std::vector<bf16> huge(128, __float2bfloat16(1.0e6f));
  CUDA_CHECK(cudaMemcpy(a.get(), huge.data(), huge.size() * sizeof(bf16), cudaMemcpyHostToDevice));
  gemm::BlockScaledInputs inputs;
  inputs.quantize(p, a.get(), b.get(), stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const BlockScaledOperands operands = inputs.operands();
  const int64_t k_blocks = BlockScaledOperands::k_blocks(p.k);

  struct Matrix {
    const char* name;
    int64_t rows;
    int block_rows;
    const bf16* input;
    const e4m3* values;
    const float* scales;
    int64_t row_stride, k_block_stride, scale_count;
    int least_spread_octaves;  // how far apart its largest and smallest scale must be
  };
  const Matrix matrices[] = {
      {"A", p.m, 1, a.get(), operands.a, operands.a_scales, 1, BlockScaledOperands::scale_rows(p.m),
       k_blocks * BlockScaledOperands::scale_rows(p.m), 20},
      {"B", p.n, 128, b.get(), operands.b, operands.b_scales, BlockScaledOperands::b_scale_stride(p.k),
       1, gemm::ceil_div<int64_t>(p.n, 128) * BlockScaledOperands::b_scale_stride(p.k), 8}};
  for (const Matrix& matrix : matrices) {
    const auto input = download(matrix.input, size_t(matrix.rows * p.k));
    const auto values = download(matrix.values, input.size());
    const auto scales = download(matrix.scales, size_t(matrix.scale_count));
    const int64_t row_blocks = gemm::ceil_div<int64_t>(matrix.rows, matrix.block_rows);
    int wrong_scales = 0, wrong_values = 0, blocks_not_at_448 = 0;
    float smallest_scale = INFINITY, largest_scale = 0;
    for (int64_t rb = 0; rb < row_blocks; ++rb)
      for (int64_t kb = 0; kb < k_blocks; ++kb) {
        float amax = 0, largest_value = 0;
        const int64_t last_row = std::min(matrix.rows, (rb + 1) * matrix.block_rows);
        const int64_t last_k = std::min(p.k, (kb + 1) * 128);
        for (int64_t r = rb * matrix.block_rows; r < last_row; ++r)
          for (int64_t k = kb * 128; k < last_k; ++k)
            amax = std::max(amax, std::fabs(float(input[r * p.k + k])));
        const float expected_scale = amax > 0 ? amax / gemm::kE4m3Max : 1.0f;
        const float scale = scales[rb * matrix.row_stride + kb * matrix.k_block_stride];
        wrong_scales += scale != expected_scale;
        smallest_scale = std::min(smallest_scale, scale);
        largest_scale = std::max(largest_scale, scale);
        for (int64_t r = rb * matrix.block_rows; r < last_row; ++r)
          for (int64_t k = kb * 128; k < last_k; ++k) {
            const float value = float(values[r * p.k + k]);
            // The nearest e4m3 (saturating) of the value times the scale's reciprocal.
            const e4m3 expected(float(input[r * p.k + k]) * (1.0f / expected_scale));
            wrong_values += value != float(expected);
            largest_value = std::max(largest_value, std::fabs(value));
          }
        blocks_not_at_448 += largest_value != gemm::kE4m3Max;
      }
    EXPECT_EQ(wrong_scales, 0) << matrix.name << ": scales other than amax / 448";
    EXPECT_EQ(wrong_values, 0) << matrix.name << ": values other than the nearest e4m3";
    EXPECT_EQ(blocks_not_at_448, 0) << matrix.name << ": blocks whose largest value is not 448";
    // The spread: A's 544 blocks over at least 2^20 (6 orders of magnitude), B's 12 over 2^8.
    EXPECT_GT(largest_scale / smallest_scale, std::ldexp(1.0f, matrix.least_spread_octaves))
        << matrix.name;
  }
}

// Lesson 18 passes its check; the same output fails it once one of B's scales is off by a factor
// of two, and once one slice's sum is lost: the check's allowance is far below what a wrong scale
// or a lost slice costs.
TEST(BlockScaling, CheckCatchesAWrongScaleAndALostSlice) {
  const gemm::Lesson& lesson = *gemm::find_lesson(18);
  gemm::LessonRunner& runner = gpu_test_support::shared_runner();
  if (!gpu_test_support::runs_here(lesson)) return;
  const GemmProblem p{256, 256, 512};
  runner.set_problem(p, /*seed=*/91, {}, *lesson.workload);
  ASSERT_TRUE(runner.check(lesson).passed());

  // The kernel gets copies of the scales with one changed; the check's reference keeps the true
  // ones (the runner's).
  const BlockScaledOperands operands =
      dynamic_cast<gemm::BlockScaledE4m3&>(runner.workload(*lesson.workload)).operands();
  const int64_t rows = BlockScaledOperands::scale_rows(p.m);
  const int64_t k_blocks = BlockScaledOperands::k_blocks(p.k);
  std::vector<float> a_scales = download(operands.a_scales, size_t(k_blocks * rows));
  std::vector<float> b_scales = download(
      operands.b_scales, size_t(2 * BlockScaledOperands::b_scale_stride(p.k)));
  const auto run_with = [&](const std::vector<float>& a_copy, const std::vector<float>& b_copy) {
    gemm::DeviceBuffer<float> a_device(a_copy.size()), b_device(b_copy.size());
    CUDA_CHECK(cudaMemcpy(a_device.get(), a_copy.data(), a_device.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b_device.get(), b_copy.data(), b_device.bytes(), cudaMemcpyHostToDevice));
    gemm::GemmArgs args;
    args.problem = p;
    args.d = runner.d();
    args.fp8 = operands;
    args.fp8.a_scales = a_device.get();
    args.fp8.b_scales = b_device.get();
    // (no workspace: lesson 18's schedules are data-parallel)
    gemm::launch_planned(lesson, args, gemm::plan_launch(lesson, p), runner.stream());
    CUDA_CHECK(cudaStreamSynchronize(runner.stream()));
    return runner.verify_current_output(*lesson.workload);
  };
  ASSERT_TRUE(run_with(a_scales, b_scales).passed()) << "the unchanged copies must pass";

  // B's scale of block (0, 1) doubled: columns 0..127 take a wrong scale in K block 1.
  std::vector<float> wrong_b = b_scales;
  wrong_b[1] *= 2;
  const gemm::CheckResult wrong_scale = run_with(a_scales, wrong_b);
  EXPECT_FALSE(wrong_scale.against_cublas.passed());

  // A's scales of K block 2 zeroed: that slice's products are lost in every row. With the blocks
  // 2^-16 .. 2^16 apart, that changes an element beyond the allowance only where block 2 carries
  // a real share of its sum (about 7% of them on the H200's first run): still many.
  std::vector<float> lost_a = a_scales;
  std::fill(lost_a.begin() + 2 * rows, lost_a.begin() + 3 * rows, 0.0f);
  const gemm::CheckResult lost_slice = run_with(lost_a, b_scales);
  EXPECT_FALSE(lost_slice.against_cublas.passed());
  EXPECT_GT(lost_slice.against_cublas.mismatches, p.m * p.n / 100)
      << "a lost slice should fail a share of the elements";
}

// Lesson 18's quantized output (gemm::BlockScaledOutput) on a decode row, a ragged shape and one
// of several tiles with N not a multiple of 128: the e4m3 D and its scales are, bit for bit, what
// the inputs' quantizer makes of the kernel's own bf16 D, and amax is exactly max |D|. The outputs
// start poisoned (e4m3's NaN, NaN scales), so an unwritten value or scale shows too.
TEST(BlockScaling, QuantizedOutputIsTheQuantizersOfD) {
  const gemm::Lesson& lesson = *gemm::find_lesson(18);
  gemm::LessonRunner& runner = gpu_test_support::shared_runner();
  if (!gpu_test_support::runs_here(lesson)) return;
  cudaStream_t stream = runner.stream();
  for (const GemmProblem& p : {GemmProblem{1, 136, 256}, GemmProblem{200, 264, 400},
                               GemmProblem{520, 1032, 1024}}) {
    SCOPED_TRACE(std::to_string(p.m) + " x " + std::to_string(p.n) + " x " + std::to_string(p.k));
    runner.set_problem(p, /*seed=*/95, {}, *lesson.workload);
    ASSERT_TRUE(runner.check(lesson).passed());  // (the reference that verify_current_output reads)
    const int64_t count = p.m * p.n;
    const int64_t scale_count =
        BlockScaledOperands::k_blocks(p.n) * BlockScaledOperands::scale_rows(p.m);
    gemm::DeviceBuffer<e4m3> d8{size_t(count)}, reference_d8{size_t(count)};
    gemm::DeviceBuffer<float> scales{size_t(scale_count)}, reference_scales{size_t(scale_count)};
    gemm::DeviceBuffer<unsigned int> amax_bits(1);
    CUDA_CHECK(cudaMemset(d8.get(), 0x7f, d8.bytes()));  // 0x7f: e4m3's NaN
    CUDA_CHECK(cudaMemset(scales.get(), 0xff, scales.bytes()));
    CUDA_CHECK(cudaMemset(amax_bits.get(), 0, amax_bits.bytes()));

    gemm::GemmArgs args;
    args.problem = p;
    args.d = runner.d();
    args.fp8 = dynamic_cast<gemm::BlockScaledE4m3&>(runner.workload(*lesson.workload)).operands();
    args.fp8_out = {d8.get(), scales.get(), amax_bits.get()};
    gemm::launch_planned(lesson, args, gemm::plan_launch(lesson, p), stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    ASSERT_TRUE(runner.verify_current_output(*lesson.workload).passed()) << "bf16 D itself";

    gemm::quantize_1x128(runner.d(), p.m, p.n, reference_d8.get(), reference_scales.get(), stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto values = download(d8.get(), size_t(count));
    const auto reference_values = download(reference_d8.get(), size_t(count));
    int64_t wrong_values = 0;
    for (int64_t i = 0; i < count; ++i) wrong_values += values[i].__x != reference_values[i].__x;
    EXPECT_EQ(wrong_values, 0) << "e4m3 values other than the quantizer's of bf16 D";

    const auto d8_scales = download(scales.get(), size_t(scale_count));
    const auto quantizer_scales = download(reference_scales.get(), size_t(scale_count));
    int64_t wrong_scales = 0;
    for (int64_t block = 0; block < BlockScaledOperands::k_blocks(p.n); ++block)
      for (int64_t row = 0; row < p.m; ++row) {  // the rows past M are padding
        const int64_t at = block * BlockScaledOperands::scale_rows(p.m) + row;
        wrong_scales += std::memcmp(&d8_scales[size_t(at)], &quantizer_scales[size_t(at)],
                                    sizeof(float)) != 0;
      }
    EXPECT_EQ(wrong_scales, 0) << "scales other than the quantizer's of bf16 D";

    float amax = 0.0f;
    for (const bf16 value : download(runner.d(), size_t(count)))
      amax = std::max(amax, std::fabs(__bfloat162float(value)));
    const uint32_t kernel_amax_bits = download(amax_bits.get(), 1)[0];
    uint32_t max_bits = 0;
    std::memcpy(&max_bits, &amax, sizeof(float));
    EXPECT_EQ(kernel_amax_bits, max_bits) << "max |D| " << amax;
    EXPECT_GT(amax, 0.0f);
  }
}

// A past 2^31 elements in e4m3 (2.2 GB): every offset into it needs 64 bits.
TEST(BlockScaling, AOver2GElements) {
  const gemm::Lesson& lesson = *gemm::find_lesson(18);
  gemm::LessonRunner& runner = gpu_test_support::shared_runner();
  if (!gpu_test_support::runs_here(lesson)) return;
  const GemmProblem p{524288, 128, 4112};
  runner.set_problem(p, /*seed=*/93, {}, *lesson.workload);
  const gemm::CheckResult result = runner.check(lesson);
  EXPECT_TRUE(result.passed()) << result.against_cublas.summary(p.n);
}

}  // namespace
