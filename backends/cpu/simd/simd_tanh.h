#pragma once

// tanh over any Simd level, from its exp: tanh(x) = 1 - 2 / (exp(2x) + 1). The vector exp
// saturates instead of overflowing (simd_exp.h), so large |x| give exactly ±1. Near 0 the
// subtraction leaves an absolute error of a few 1e-8, which GELU and soft-capping (the users)
// scale down or keep below their tolerance.

namespace baton::cpu {

template <class S>
typename S::V simd_tanh(typename S::V x) {
  const typename S::V one = S::set1(1.0f), two = S::set1(2.0f);
  return S::sub(one, S::div(two, S::add(S::exp(S::mul(two, x)), one)));
}

}  // namespace baton::cpu
