#pragma once

// tanh over any Simd level, from its exp: tanh(x) = 1 - 2 / (exp(2x) + 1). Large |x| give
// exactly ±1 (the vector exp saturates, simd_exp.h; std::exp's inf divides to 0). Near 0 the
// subtraction leaves an absolute error of a few 1e-8, a relative one up to ~1e-3 once |x| is
// below ~1e-4: harmless where GELU multiplies by x and soft-capping by its cap (the users), but
// not a general-purpose tanh.

namespace baton::cpu {

template <class S>
typename S::V simd_tanh(typename S::V x) {
  const typename S::V one = S::set1(1.0f), two = S::set1(2.0f);
  return S::sub(one, S::div(two, S::add(S::exp(S::mul(two, x)), one)));
}

}  // namespace baton::cpu
