#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "common/activation.hpp"
#include "common/references/epilogue_cpu.hpp"

using gemm::Activation;
using gemm::cpu_epilogue_fp64;
using gemm::Epilogue;
using gemm::GemmProblem;

// Reference values below were worked out from the formulas in common/gemm.hpp, in double:
//   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),  silu(x) = x / (1 + exp(-x)).

TEST(Activation, ReluKeepsPositivesAndZeroesNegatives) {
  EXPECT_EQ(gemm::relu(2.5), 2.5);
  EXPECT_EQ(gemm::relu(-2.5), 0.0);
  EXPECT_EQ(gemm::relu(0.0), 0.0);
  EXPECT_EQ(gemm::relu(3.0f), 3.0f);
  EXPECT_EQ(gemm::relu(-1e30f), 0.0f);
}

TEST(Activation, ReluPropagatesNan) {
  // A broken product must stay visible after the activation.
  EXPECT_TRUE(std::isnan(gemm::relu(std::nan(""))));
  EXPECT_TRUE(std::isnan(gemm::relu(std::nanf(""))));
}

TEST(Activation, GeluTanhFormAtHandWorkedPoints) {
  EXPECT_EQ(gemm::gelu_tanh(0.0), 0.0);
  EXPECT_NEAR(gemm::gelu_tanh(1.0), 0.8411919906082768, 1e-15);
  EXPECT_NEAR(gemm::gelu_tanh(-1.0), -0.15880800939172324, 1e-15);
  EXPECT_NEAR(gemm::gelu_tanh(3.0), 2.996362607918227, 1e-14);
  EXPECT_NEAR(gemm::gelu_tanh(-3.0), -0.0036373920817729943, 1e-16);
  EXPECT_NEAR(gemm::gelu_tanh(0.5), 0.34571400982514394, 1e-15);
}

TEST(Activation, GeluIsNotTheErfForm) {
  // The erf form gives 0.5 (1 + erf(1 / sqrt 2)) = 0.8413447460685429 at 1: 1.5e-4 away, far more
  // than the tolerance above. A test that could not tell the two forms apart would be useless.
  EXPECT_GT(std::fabs(gemm::gelu_tanh(1.0) - 0.8413447460685429), 1e-4);
}

TEST(Activation, GeluLimitsForLargeMagnitudes) {
  // gelu(x) -> x for large x, -> 0 for very negative x, without NaN even when x^3 overflows.
  EXPECT_DOUBLE_EQ(gemm::gelu_tanh(10.0), 10.0);
  EXPECT_EQ(gemm::gelu_tanh(-10.0), 0.0);
  EXPECT_FLOAT_EQ(gemm::gelu_tanh(1e20f), 1e20f);
  EXPECT_EQ(gemm::gelu_tanh(-1e20f), 0.0f);
  EXPECT_DOUBLE_EQ(gemm::gelu_tanh(1e200), 1e200);
}

TEST(Activation, GeluOfMinusXIsGeluOfXMinusX) {
  // tanh is odd, so 0.5 (-x) (1 + tanh(-u)) = 0.5 x (1 + tanh(u)) - x.
  for (double x : {0.25, 1.0, 2.0, 4.5})
    EXPECT_NEAR(gemm::gelu_tanh(-x), gemm::gelu_tanh(x) - x, 1e-14) << "x = " << x;
}

TEST(Activation, SiluAtHandWorkedPoints) {
  EXPECT_EQ(gemm::silu(0.0), 0.0);
  EXPECT_NEAR(gemm::silu(1.0), 0.7310585786300049, 1e-15);
  EXPECT_NEAR(gemm::silu(-1.0), -0.2689414213699951, 1e-15);
  EXPECT_NEAR(gemm::silu(3.0), 2.8577223804672998, 1e-14);
  EXPECT_NEAR(gemm::silu(-3.0), -0.14227761953270035, 1e-15);
}

TEST(Activation, SiluLimitsForLargeMagnitudes) {
  // silu(x) -> x for large x, -> 0 for very negative x, also where exp(-x) overflows to inf.
  EXPECT_DOUBLE_EQ(gemm::silu(50.0), 50.0);
  EXPECT_NEAR(gemm::silu(-50.0), 0.0, 1e-19);
  EXPECT_EQ(gemm::silu(-1000.0), 0.0);
  EXPECT_EQ(gemm::silu(-1000.0f), 0.0f);
  EXPECT_FLOAT_EQ(gemm::silu(100.0f), 100.0f);
}

TEST(Activation, FloatAgreesWithDouble) {
  // What a kernel computes in float must match the fp64 reference to float precision.
  for (double x = -8.0; x <= 8.0; x += 0.125) {
    const float xf = float(x);
    EXPECT_NEAR(gemm::gelu_tanh(xf), gemm::gelu_tanh(x), 1e-6 * (1 + std::fabs(x))) << "x = " << x;
    EXPECT_NEAR(gemm::silu(xf), gemm::silu(x), 1e-6 * (1 + std::fabs(x))) << "x = " << x;
    EXPECT_EQ(gemm::relu(xf), float(gemm::relu(x))) << "x = " << x;
  }
}

TEST(Activation, CompileTimeAndRunTimeDispatchAgree) {
  for (double x : {-2.0, -0.5, 0.0, 0.75, 3.0}) {
    EXPECT_EQ(gemm::activate<Activation::none>(x), x);
    EXPECT_EQ(gemm::activate<Activation::relu>(x), gemm::relu(x));
    EXPECT_EQ(gemm::activate<Activation::gelu>(x), gemm::gelu_tanh(x));
    EXPECT_EQ(gemm::activate<Activation::silu>(x), gemm::silu(x));
    EXPECT_EQ(gemm::activate(x, Activation::none), x);
    EXPECT_EQ(gemm::activate(x, Activation::relu), gemm::relu(x));
    EXPECT_EQ(gemm::activate(x, Activation::gelu), gemm::gelu_tanh(x));
    EXPECT_EQ(gemm::activate(x, Activation::silu), gemm::silu(x));
    const float xf = float(x);
    EXPECT_EQ(gemm::activate<Activation::gelu>(xf), gemm::gelu_tanh(xf));
    EXPECT_EQ(gemm::activate(xf, Activation::silu), gemm::silu(xf));
  }
}

// A 2 x 3 example worked by hand. M != N, so a bias applied per row instead of per column, or C
// read transposed, gives other numbers.
//   product = [1 -2 0.5; 3 -4 2],  C = [2 2 -1; -2 0 4],  bias = [0.5 -1 0.25]
//   alpha = 1.5, beta = 0.5:  1.5 * product + 0.5 * C + bias = [3 -3 0.5; 4 -7 5.25]
class CpuEpilogue : public testing::Test {
 protected:
  const GemmProblem problem{2, 3, 8};
  const std::vector<double> product{1, -2, 0.5, 3, -4, 2};
  const std::vector<float> c{2, 2, -1, -2, 0, 4};
  const std::vector<float> bias{0.5f, -1.0f, 0.25f};

  static Epilogue epilogue(Activation activation) {
    Epilogue result;
    result.alpha = 1.5f;
    result.beta = 0.5f;
    result.activation = activation;
    return result;
  }
};

TEST_F(CpuEpilogue, ScalesAddsCAndBiasPerColumn) {
  EXPECT_EQ(cpu_epilogue_fp64(product, problem, epilogue(Activation::none), c, bias),
            (std::vector<double>{3, -3, 0.5, 4, -7, 5.25}));
}

TEST_F(CpuEpilogue, AppliesReluAfterTheSum) {
  EXPECT_EQ(cpu_epilogue_fp64(product, problem, epilogue(Activation::relu), c, bias),
            (std::vector<double>{3, 0, 0.5, 4, 0, 5.25}));
}

TEST_F(CpuEpilogue, AppliesGeluAfterTheSum) {
  const std::vector<double> expected{2.996362607918227,   -0.0036373920817729943,
                                     0.34571400982514394, 3.9999297540518075,
                                     -2.3314683517128287e-15, 5.249999960415361};
  const std::vector<double> got =
      cpu_epilogue_fp64(product, problem, epilogue(Activation::gelu), c, bias);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-14) << "element " << i;
}

TEST_F(CpuEpilogue, AppliesSiluAfterTheSum) {
  const std::vector<double> expected{2.8577223804672998, -0.14227761953270035,
                                     0.3112296656009273, 3.928055160151634,
                                     -0.006377358360804518, 5.222594340108818};
  const std::vector<double> got =
      cpu_epilogue_fp64(product, problem, epilogue(Activation::silu), c, bias);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-14) << "element " << i;
}

TEST_F(CpuEpilogue, NoBiasAndBetaZeroLeaveAlphaTimesProduct) {
  Epilogue plain_scale = epilogue(Activation::none);
  plain_scale.beta = 0.0f;
  // With beta == 0, C is not read: it may be empty.
  EXPECT_EQ(cpu_epilogue_fp64(product, problem, plain_scale, {}, {}),
            (std::vector<double>{1.5, -3, 0.75, 4.5, -6, 3}));
}

TEST_F(CpuEpilogue, DefaultEpilogueReturnsTheProduct) {
  EXPECT_EQ(cpu_epilogue_fp64(product, problem, Epilogue{}, {}, {}), product);
}

TEST_F(CpuEpilogue, RejectsVectorsOfTheWrongSize) {
  EXPECT_THROW(cpu_epilogue_fp64({1, 2, 3}, problem, epilogue(Activation::none), c, bias),
               std::invalid_argument);
  // beta != 0 needs all of C.
  EXPECT_THROW(cpu_epilogue_fp64(product, problem, epilogue(Activation::none), {}, bias),
               std::invalid_argument);
  // A bias per row (M values) instead of per column (N values).
  EXPECT_THROW(cpu_epilogue_fp64(product, problem, epilogue(Activation::none), c, {1, 2}),
               std::invalid_argument);
}
