#include "backends/cpu/isa/cpu_isa.h"

#include <cpuid.h>

#include <cstdlib>
#include <string>

#include "baton/error.h"

namespace baton::cpu {
namespace {

std::optional<Isa> g_override;

bool os_saves_avx512_state() {
  // XCR0 bits 1-2 (SSE/AVX) and 5-7 (opmask, ZMM) must be enabled by the OS.
  unsigned eax, edx;
  __asm__("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (eax & 0xe6) == 0xe6;
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  const bool osxsave = ecx & bit_OSXSAVE;
  f.fma = ecx & bit_FMA;
  f.f16c = ecx & bit_F16C;
  if (!osxsave || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return f;
  f.avx2 = ebx & bit_AVX2;
  if (os_saves_avx512_state()) {
    f.avx512f = ebx & bit_AVX512F;
    f.avx512dq = ebx & bit_AVX512DQ;
    f.avx512bw = ebx & bit_AVX512BW;
    f.avx512vl = ebx & bit_AVX512VL;
    f.avx512vnni = ecx & bit_AVX512VNNI;
    unsigned eax1, ebx1, ecx1, edx1;
    if (__get_cpuid_count(7, 1, &eax1, &ebx1, &ecx1, &edx1)) f.avx512bf16 = eax1 & bit_AVX512BF16;
  }
  return f;
}

Isa resolve_from_environment() {
  const char* env = std::getenv("BATON_CPU_ISA");
  if (!env || !*env) return best_supported_isa();
  const std::optional<Isa> isa = parse_isa(env);
  if (!isa) {
    throw Error(ErrorCategory::kInvalidArgument,
                std::string("BATON_CPU_ISA='") + env + "' is not one of generic, avx2, avx512");
  }
  if (!is_supported(*isa)) {
    throw Error(ErrorCategory::kUnsupported,
                std::string("BATON_CPU_ISA=") + env + " but this CPU does not support it");
  }
  return *isa;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

bool is_supported(Isa isa) {
  const CpuFeatures& f = cpu_features();
  switch (isa) {
    case Isa::kGeneric:
      return true;
    case Isa::kAvx2:
      return f.avx2 && f.fma && f.f16c;
    case Isa::kAvx512:
      return is_supported(Isa::kAvx2) && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq &&
             f.avx512vnni;
  }
  return false;
}

Isa best_supported_isa() {
  if (is_supported(Isa::kAvx512)) return Isa::kAvx512;
  if (is_supported(Isa::kAvx2)) return Isa::kAvx2;
  return Isa::kGeneric;
}

Isa active_isa() {
  if (g_override) return *g_override;
  static const Isa isa = resolve_from_environment();
  return isa;
}

std::string_view to_string(Isa isa) {
  switch (isa) {
    case Isa::kGeneric:
      return "generic";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

std::optional<Isa> parse_isa(std::string_view name) {
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
    if (name == to_string(isa)) return isa;
  }
  return std::nullopt;
}

ScopedIsaOverride::ScopedIsaOverride(Isa isa) : previous_(g_override) {
  if (!is_supported(isa)) {
    throw Error(ErrorCategory::kUnsupported,
                "this CPU does not support the " + std::string(to_string(isa)) + " kernels");
  }
  g_override = isa;
}

ScopedIsaOverride::~ScopedIsaOverride() {
  g_override = previous_;
}

}  // namespace baton::cpu
