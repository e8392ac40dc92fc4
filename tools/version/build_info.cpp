#include "tools/version/build_info.h"

#include <string>

#include "backends/cpu/isa/cpu_isa.h"

namespace baton::cli {

std::string version_text() {
  std::string text = "baton " BATON_VERSION " (commit ";
  text += build_commit();
  text += ", " BATON_BUILD_TYPE " build, " BATON_COMPILER ")\n";
  text += "cpu kernels:";
  for (const cpu::Isa isa : {cpu::Isa::kGeneric, cpu::Isa::kAvx2, cpu::Isa::kAvx512}) {
    text += " ";
    text += cpu::to_string(isa);
  }
  text += "; this CPU runs ";
  text += cpu::to_string(cpu::active_isa());
  text += " (BATON_CPU_ISA overrides)\n";
  text += "plugins configured: " BATON_BUILT_PLUGINS;
  return text;
}

}  // namespace baton::cli
