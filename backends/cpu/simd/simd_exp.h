#pragma once

// Constants of the vector exp shared by the AVX2 and AVX-512 levels (Cephes expf): x = n ln2 + r
// with |r| <= ln2/2, exp(r) by a degree-7 polynomial, 2^n put into the exponent bits. Relative
// error <= 2 ulp (< 2.4e-7) for x in [kMin, kMax]; below kMin the result is 0 (true value
// < 1.7e-38), above kMax it saturates at exp(kMax).

namespace baton::cpu::exp_constants {

constexpr float kMin = -87.0f;
constexpr float kMax = 88.3f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f;
constexpr float kP1 = 1.3981999507e-3f;
constexpr float kP2 = 8.3334519073e-3f;
constexpr float kP3 = 4.1665795894e-2f;
constexpr float kP4 = 1.6666665459e-1f;
constexpr float kP5 = 5.0000001201e-1f;

}  // namespace baton::cpu::exp_constants
