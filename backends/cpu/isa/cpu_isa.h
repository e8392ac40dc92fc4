#pragma once

#include <optional>
#include <string_view>

namespace baton::cpu {

// Instruction-set levels the CPU kernels are compiled for. Each level's kernels live in their
// own source files built with that level's compiler flags (see backends/cpu/CMakeLists.txt), and
// the level is chosen once at start-up, so one binary runs on any x86-64 machine.
enum class Isa {
  kGeneric,  // plain C++ the compiler may vectorise for baseline x86-64 (SSE2)
  kAvx2,     // AVX2 + FMA + F16C
  kAvx512,   // AVX-512 F/BW/VL/DQ + VNNI (+ BF16 where avx512_bf16 says so)
};

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512vnni = false, avx512bf16 = false;
};

const CpuFeatures& cpu_features();
// The best level this CPU supports.
Isa best_supported_isa();
bool is_supported(Isa isa);

// The level kernels use: BATON_CPU_ISA=generic|avx2|avx512 when set (an Error if this CPU lacks
// it), else the best supported. Tests pin a level with ScopedIsaOverride.
Isa active_isa();

std::string_view to_string(Isa isa);
std::optional<Isa> parse_isa(std::string_view name);

// Forces active_isa() for the scope's lifetime; for tests that cover every path on one machine.
class ScopedIsaOverride {
 public:
  explicit ScopedIsaOverride(Isa isa);
  ~ScopedIsaOverride();
  ScopedIsaOverride(const ScopedIsaOverride&) = delete;
  ScopedIsaOverride& operator=(const ScopedIsaOverride&) = delete;

 private:
  std::optional<Isa> previous_;
};

}  // namespace baton::cpu
