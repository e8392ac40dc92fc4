#pragma once

// Every ISA level this machine can run, for tests that cover each kernel path against the
// reference (pin one with cpu::ScopedIsaOverride). Levels the CPU lacks get no test at all rather
// than a skipped one: tests/tools/isa_emulation_test.sh runs them on emulated CPUs.

#include <string>
#include <vector>

#include "backends/cpu/isa/cpu_isa.h"

namespace baton::testing {

inline std::vector<cpu::Isa> supported_isas() {
  std::vector<cpu::Isa> isas;
  for (cpu::Isa isa : {cpu::Isa::kGeneric, cpu::Isa::kAvx2, cpu::Isa::kAvx512}) {
    if (cpu::is_supported(isa)) isas.push_back(isa);
  }
  return isas;
}

// The levels among supported_isas() whose quantized kernels read 32-row panels (all but
// generic).
inline std::vector<cpu::Isa> panel_isas() {
  std::vector<cpu::Isa> isas = supported_isas();
  std::erase(isas, cpu::Isa::kGeneric);
  return isas;
}

inline std::string isa_name(cpu::Isa isa) {
  return std::string(cpu::to_string(isa));
}

}  // namespace baton::testing
