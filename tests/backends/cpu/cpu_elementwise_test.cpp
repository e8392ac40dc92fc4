// CPU rms_norm, rope, swiglu, geglu, scale, softcap, add, softmax and argmax against the reference
// on random inputs. Row lengths include 1 and sizes that are not multiples of 4, 8 or 16. Every
// test runs once per ISA level this machine supports.

#include <gtest/gtest.h>

#include <tuple>

#include "ops/reference.h"
#include "tests/backends/cpu/cpu_test_util.h"
#include "tests/backends/cpu/isa_test_util.h"

namespace baton {
namespace {

using testing::expect_close;
using testing::expect_identical;
using testing::random_f32;
using testing::run_cpu;

const std::vector<Shape> kRowShapes = {{1, 1}, {3, 7}, {5, 33}, {4, 100}, {2, 3, 65}, {2, 4096}};

class CpuElementwise : public ::testing::TestWithParam<cpu::Isa> {
 protected:
  cpu::ScopedIsaOverride isa_{GetParam()};
};

TEST_P(CpuElementwise, RmsNormMatchesReference) {
  for (const Shape& shape : kRowShapes) {
    Tensor x = random_f32(shape, 41, -3.0f, 3.0f);
    Tensor w = random_f32({shape.back()}, 42);
    Tensor out = run_cpu([&](Graph& g) { return g.rms_norm(x, w, 1e-6f); });
    Tensor ref = Tensor::host(DType::kF32, shape);
    reference::rms_norm(x, w, 1e-6f, ref);
    // f32: the sum of squares is an fp32 reduction, relative error ~1e-7 per element.
    expect_close(out, ref, 1e-5, 1e-6);
  }
}

struct RopeCase {
  int64_t heads, head_dim;
  RopeParams params;
};

TEST_P(CpuElementwise, RopeMatchesReferenceInBothModes) {
  std::vector<RopeCase> cases;
  for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
    cases.push_back({3, 8, testing::rope_params(8, mode)});
    cases.push_back({4, 64, testing::rope_params(64, mode, 500000.0f)});
    cases.push_back({2, 6, testing::rope_params(4, mode, 10000.0f, 0.25f)});
    cases.push_back({5, 80, testing::rope_params(32, mode)});
    RopeParams factors = testing::rope_params(16, mode);
    for (int i = 0; i < 8; ++i) factors.freq_factors.push_back(1.0f + static_cast<float>(i));
    cases.push_back({2, 16, factors});
    // YaRN over a partial rotation, with a magnitude of its own on top of YaRN's.
    RopeParams yarn = testing::rope_params(48, mode, 1000000.0f, 0.125f);
    yarn.yarn_ext_factor = 1.0f;
    yarn.yarn_original_context = 4096;
    yarn.attn_factor = 0.75f;
    cases.push_back({3, 64, yarn});
  }
  for (const RopeCase& c : cases) {
    // Positions up to 8191: angles in the thousands of radians test the angle precision.
    Tensor x = random_f32({9, c.heads, c.head_dim}, 43);
    Tensor pos = testing::random_i32(9, 8192, 44);
    Tensor out = run_cpu([&](Graph& g) { return g.rope(x, pos, c.params); });
    Tensor ref = Tensor::host(DType::kF32, x.shape());
    reference::rope(x, pos, c.params, ref);
    // f32 with |x| < 1: cos/sin are rounded to f32 and the rotation is two f32 products, so
    // each element is within a few ulps of 1.
    expect_close(out, ref, 1e-5, 1e-6);
  }
}

TEST_P(CpuElementwise, SwiGluMatchesReference) {
  for (const Shape& shape : kRowShapes) {
    Tensor gate = random_f32(shape, 45, -12.0f, 12.0f);
    Tensor up = random_f32(shape, 46);
    Tensor out = run_cpu([&](Graph& g) { return g.swiglu(gate, up); });
    Tensor ref = Tensor::host(DType::kF32, shape);
    reference::swiglu(gate, up, ref);
    // The vector exp is within 2 ulp (simd_exp.h), then one division and two products.
    expect_close(out, ref, 1e-5, 1e-7);
  }
}

TEST_P(CpuElementwise, GeGluMatchesReference) {
  for (const Shape& shape : kRowShapes) {
    Tensor gate = random_f32(shape, 52, -12.0f, 12.0f);
    Tensor up = random_f32(shape, 53);
    Tensor out = run_cpu([&](Graph& g) { return g.geglu(gate, up); });
    Tensor ref = Tensor::host(DType::kF32, shape);
    reference::geglu(gate, up, ref);
    // tanh from the vector exp (simd_tanh.h) has an absolute error of a few 1e-8 near 0, which
    // 0.5 * gate * |up| < 6 scales to below 1e-6.
    expect_close(out, ref, 1e-5, 1e-6);
  }
}

TEST_P(CpuElementwise, ScaleMatchesReferenceExactly) {
  for (const Shape& shape : kRowShapes) {
    Tensor x = random_f32(shape, 54);
    Tensor out = run_cpu([&](Graph& g) { return g.scale(x, 45.25f); });
    Tensor ref = Tensor::host(DType::kF32, shape);
    reference::scale(x, 45.25f, ref);
    expect_identical(out, ref);  // one product rounded once either way
  }
}

TEST_P(CpuElementwise, SoftcapMatchesReference) {
  for (const Shape& shape : kRowShapes) {
    // Logits far beyond the cap (saturated), near it and near 0.
    Tensor x = random_f32(shape, 55, -200.0f, 200.0f);
    Tensor out = run_cpu([&](Graph& g) { return g.softcap(x, 30.0f); });
    Tensor ref = Tensor::host(DType::kF32, shape);
    reference::softcap(x, 30.0f, ref);
    // 30 * tanh with the tanh's few-1e-8 absolute error.
    expect_close(out, ref, 1e-5, 2e-6);
  }
}

TEST_P(CpuElementwise, AddMatchesReferenceExactlyWithAndWithoutBroadcast) {
  for (const Shape& shape : kRowShapes) {
    Tensor a = random_f32(shape, 47);
    for (const Tensor& b : {random_f32(shape, 48), random_f32({shape.back()}, 49)}) {
      Tensor out = run_cpu([&](Graph& g) { return g.add(a, b); });
      Tensor ref = Tensor::host(DType::kF32, shape);
      reference::add(a, b, ref);
      expect_identical(out, ref);  // a float sum rounded once either way
    }
  }
}

TEST_P(CpuElementwise, SoftmaxMatchesReference) {
  for (const Shape& shape : kRowShapes) {
    Tensor x = random_f32(shape, 50, -20.0f, 20.0f);
    Tensor out = run_cpu([&](Graph& g) { return g.softmax(x); });
    Tensor ref = Tensor::host(DType::kF32, shape);
    reference::softmax(x, ref);
    expect_close(out, ref, 1e-5, 1e-9);  // f32: expf and an fp32 row sum
  }
}

TEST_P(CpuElementwise, ArgmaxMatchesReferenceIncludingTies) {
  for (const Shape& shape : kRowShapes) {
    Tensor x = random_f32(shape, 51);
    // Plant a tie for the maximum in every row: the first occurrence must win.
    const int64_t d = shape.back();
    for (int64_t r = 0; r < x.rows() && d > 2; ++r) {
      x.data<float>()[r * d + 1] = 2.0f;
      x.data<float>()[r * d + d - 1] = 2.0f;
    }
    Tensor out = run_cpu([&](Graph& g) { return g.argmax(x); });
    Tensor ref = Tensor::host(DType::kI32, {x.rows()});
    reference::argmax(x, ref);
    expect_identical(out, ref);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, CpuElementwise, ::testing::ValuesIn(testing::supported_isas()),
                         [](const auto& info) { return testing::isa_name(info.param); });

}  // namespace
}  // namespace baton
