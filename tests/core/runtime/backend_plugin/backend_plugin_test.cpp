#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/runtime/backend_plugin_abi.h"
#include "tests/test_data.h"
#include "tests/tools/baton_command.h"

namespace baton::testing {
namespace {

const std::string kPluginDir = BATON_TEST_PLUGIN_DIR;

CommandResult baton_with_plugins(const std::string& args) {
  return run_baton(args, Capture::kStdoutAndStderr, "BATON_BACKEND_PATH=" + kPluginDir);
}

std::string demo_args() {
  return "-m " + demo_model().string() + " -p 'In the beginning' -n 24 --temp 0 -q";
}

TEST(BackendPlugin, APluginBackendRunsAModelLikeTheBuiltInOne) {
  const CommandResult cpu = run_baton("run " + demo_args() + " --backend cpu");
  const CommandResult plugin = run_baton("run " + demo_args() + " --backend testgood",
                                         Capture::kStdout, "BATON_BACKEND_PATH=" + kPluginDir);
  ASSERT_EQ(plugin.exit_code, 0);
  EXPECT_EQ(plugin.out, cpu.out);
}

TEST(BackendPlugin, AnotherAbiVersionIsRefusedNamingBothVersions) {
  const CommandResult r = baton_with_plugins("run -m x.gguf --backend testoldabi");
  EXPECT_EQ(r.exit_code, 1);
  const std::string expected = "was built for backend ABI version 1 but this Baton uses version " +
                               std::to_string(kBackendAbiVersion) + "; rebuild the plugin";
  EXPECT_NE(r.out.find(expected), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one line: " << r.out;
}

TEST(BackendPlugin, AMissingDeviceGivesTheProbesReason) {
  const CommandResult r = baton_with_plugins("run -m x.gguf --backend testnodevice");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("backend 'testnodevice' is not usable on this host: no test device present"),
            std::string::npos)
      << r.out;
}

TEST(BackendPlugin, AFileThatIsNotALibraryGivesTheLoadersMessage) {
  const auto dir = std::filesystem::temp_directory_path() / "baton_plugin_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "libbaton-backend-testbroken.so") << "not an ELF file";
  const CommandResult r = run_baton("run -m x.gguf --backend testbroken", Capture::kStdoutAndStderr,
                                    "BATON_BACKEND_PATH=" + dir.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("libbaton-backend-testbroken.so: cannot be loaded: "), std::string::npos)
      << r.out;
}

TEST(BackendPlugin, AnUnknownNameListsTheBackendsAndTheDirectoriesSearched) {
  const CommandResult r = baton_with_plugins("run -m x.gguf --backend tpu9");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("unknown backend 'tpu9'; available: cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no plugin libbaton-backend-tpu9.so in " + kPluginDir), std::string::npos)
      << r.out;
}

TEST(BackendPlugin, BackendsListsEveryPluginFoundWithItsStatus) {
  const CommandResult r = baton_with_plugins("backends");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* line : {"testgood     usable", "testoldabi   unusable", "testnodevice unusable",
                           "npu          unusable"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << "missing '" << line << "' in\n" << r.out;
  }
}

TEST(NpuStub, SaysWhatAVendorBackendMustImplement) {
  const CommandResult r = run_baton("run -m x.gguf --backend npu", Capture::kStdoutAndStderr);
  EXPECT_EQ(r.exit_code, 1);
  for (const char* part : {"backend 'npu' is not usable", "libbaton-backend-npu.so",
                           "docs/backends.md", "baton::Backend", "attention", "q4_0"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << "missing '" << part << "' in\n" << r.out;
  }
}

}  // namespace
}  // namespace baton::testing
