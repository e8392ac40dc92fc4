// `baton run --lora` and `baton lora merge`: the adapter applied at run time says what the merged
// model says, and bad adapter flags fail with one clear line.

#include <gtest/gtest.h>

#include "core/formats/gguf/gguf_file.h"
#include "models/model_config.h"
#include "tests/temp_file.h"
#include "tests/test_data.h"
#include "tests/tools/baton_command.h"
#include "tools/model_tools/synthetic_lora.h"

namespace baton {
namespace {

using testing::Capture;
using testing::run_baton;

class LoraCli : public ::testing::Test {
 protected:
  LoraCli() : adapter_("cli_lora.gguf"), merged_("cli_lora_merged.gguf") {
    const ModelConfig config = read_model_config(gguf::GgufFile::open(testing::demo_model()));
    write_gguf_lora(adapter_.path(), config.architecture, random_lora(config, 8, 41), 16.0f);
  }
  static std::string greedy(const std::string& model_and_lora) {
    return "run " + model_and_lora + " -p 'And God said' -n 16 --temp 0 -q -t 1";
  }
  testing::TempFile adapter_, merged_;
  const std::string demo_ = "-m " + testing::demo_model().string();
};

TEST_F(LoraCli, RunWithAnAdapterSaysWhatTheMergedModelSays) {
  const testing::CommandResult merge =
      run_baton("lora merge " + demo_ + " --lora " + adapter_.str() + " -o " + merged_.str(),
                Capture::kStdoutAndStderr);
  ASSERT_EQ(merge.exit_code, 0) << merge.out;
  const testing::CommandResult adapted = run_baton(greedy(demo_ + " --lora " + adapter_.str()));
  const testing::CommandResult merged = run_baton(greedy("-m " + merged_.str()));
  const testing::CommandResult base = run_baton(greedy(demo_));
  ASSERT_EQ(adapted.exit_code, 0);
  // The demo model's f16 weights become f16 again after merging, so the two differ by rounding;
  // the first tokens of a greedy continuation agree.
  EXPECT_EQ(adapted.out.substr(0, 24), merged.out.substr(0, 24));
  EXPECT_NE(adapted.out, base.out);
  // A scale of 0 leaves the base model.
  EXPECT_EQ(run_baton(greedy(demo_ + " --lora-scaled " + adapter_.str() + " 0")).out, base.out);
}

TEST_F(LoraCli, BadAdapterFlagsFailWithOneClearLine) {
  const testing::CommandResult missing =
      run_baton(greedy(demo_ + " --lora /nonexistent/adapter.gguf"), Capture::kStderr);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("/nonexistent/adapter.gguf"), std::string::npos) << missing.out;
  const testing::CommandResult two =
      run_baton(greedy(demo_ + " --lora a=" + adapter_.str() + " --lora b=" + adapter_.str()),
                Capture::kStderr);
  EXPECT_EQ(two.exit_code, 1);
  EXPECT_NE(two.out.find("one LoRA adapter"), std::string::npos) << two.out;
  const testing::CommandResult rank = run_baton(
      greedy(demo_ + " --lora " + adapter_.str() + " --max-lora-rank 4"), Capture::kStderr);
  EXPECT_EQ(rank.exit_code, 1);
  EXPECT_NE(rank.out.find("above the maximum of 4 (max_lora_rank)"), std::string::npos) << rank.out;
}

}  // namespace
}  // namespace baton
