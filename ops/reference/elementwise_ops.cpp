// Reference row-wise and element-wise ops: swiglu, geglu, scale, softcap, add, softmax, argmax.

#include <algorithm>
#include <cmath>

#include "ops/reference.h"
#include "ops/reference/checks.h"

namespace baton::reference {

using detail::require;
using detail::require_input;
using detail::require_shape;

void swiglu(const Tensor& gate, const Tensor& up, const Tensor& out) {
  require_input(gate, DType::kF32, "swiglu gate");
  require_input(up, DType::kF32, "swiglu up");
  require_shape(up, gate.shape(), "swiglu up");
  require_input(out, DType::kF32, "swiglu output");
  require_shape(out, gate.shape(), "swiglu output");
  for (int64_t i = 0; i < gate.numel(); ++i) {
    const double g = gate.data<float>()[i];
    out.data<float>()[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up.data<float>()[i]);
  }
}

void geglu(const Tensor& gate, const Tensor& up, const Tensor& out) {
  require_input(gate, DType::kF32, "geglu gate");
  require_input(up, DType::kF32, "geglu up");
  require_shape(up, gate.shape(), "geglu up");
  require_input(out, DType::kF32, "geglu output");
  require_shape(out, gate.shape(), "geglu output");
  const double sqrt_2_over_pi = std::sqrt(2.0 / std::acos(-1.0));
  for (int64_t i = 0; i < gate.numel(); ++i) {
    const double g = gate.data<float>()[i];
    const double gelu = 0.5 * g * (1.0 + std::tanh(sqrt_2_over_pi * (g + 0.044715 * g * g * g)));
    out.data<float>()[i] = static_cast<float>(gelu * up.data<float>()[i]);
  }
}

void scale(const Tensor& x, float factor, const Tensor& out) {
  require_input(x, DType::kF32, "scale x");
  require_input(out, DType::kF32, "scale output");
  require_shape(out, x.shape(), "scale output");
  for (int64_t i = 0; i < x.numel(); ++i) {
    out.data<float>()[i] = static_cast<float>(static_cast<double>(x.data<float>()[i]) * factor);
  }
}

void softcap(const Tensor& x, float cap, const Tensor& out) {
  require_input(x, DType::kF32, "softcap x");
  require_input(out, DType::kF32, "softcap output");
  require_shape(out, x.shape(), "softcap output");
  require(cap > 0.0f, "softcap cap " + std::to_string(cap) + " must be positive");
  for (int64_t i = 0; i < x.numel(); ++i) {
    out.data<float>()[i] = static_cast<float>(cap * std::tanh(x.data<float>()[i] / double{cap}));
  }
}

void add(const Tensor& a, const Tensor& b, const Tensor& out) {
  require_input(a, DType::kF32, "add a");
  require_input(b, DType::kF32, "add b");
  const bool broadcast = b.shape() != a.shape();
  require(!broadcast || (b.rank() == 1 && b.dim(0) == a.row_length()),
          "add b " + to_string(b.shape()) + " must match a " + to_string(a.shape()) +
              " or be one row of " + std::to_string(a.row_length()));
  require_input(out, DType::kF32, "add output");
  require_shape(out, a.shape(), "add output");
  const int64_t d = a.row_length();
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double sum =
        static_cast<double>(a.data<float>()[i]) + b.data<float>()[broadcast ? i % d : i];
    out.data<float>()[i] = static_cast<float>(sum);
  }
}

void softmax(const Tensor& x, const Tensor& out) {
  require_input(x, DType::kF32, "softmax x");
  require_input(out, DType::kF32, "softmax output");
  require_shape(out, x.shape(), "softmax output");
  const int64_t d = x.row_length();
  require(d > 0, "softmax rows of " + to_string(x.shape()) + " are empty");
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* in = x.data<float>() + r * d;
    float* o = out.data<float>() + r * d;
    double max_value = in[0];
    for (int64_t i = 1; i < d; ++i) max_value = std::max<double>(max_value, in[i]);
    double total = 0.0;
    for (int64_t i = 0; i < d; ++i) total += std::exp(in[i] - max_value);
    for (int64_t i = 0; i < d; ++i) o[i] = static_cast<float>(std::exp(in[i] - max_value) / total);
  }
}

void argmax(const Tensor& x, const Tensor& out) {
  require_input(x, DType::kF32, "argmax x");
  const int64_t d = x.row_length();
  require(d > 0, "argmax rows of " + to_string(x.shape()) + " are empty");
  require_input(out, DType::kI32, "argmax output");
  require_shape(out, {x.rows()}, "argmax output");
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* in = x.data<float>() + r * d;
    int64_t best = 0;
    for (int64_t i = 1; i < d; ++i) {
      if (in[i] > in[best]) best = i;
    }
    out.data<int32_t>()[r] = static_cast<int32_t>(best);
  }
}

}  // namespace baton::reference
