// Models whose matrices are Q4_1, Q5_0, Q5_1 or K-quants, including a mixed file (Q6_K output,
// Q4_K elsewhere, as in Q4_K_M downloads): each loads, and at every step of the same weights'
// greedy continuation when dequantized to F32 it picks the same token (or a near tie); and a
// tensor whose rows are not whole blocks fails at load naming it.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <vector>

#include "baton/error.h"
#include "baton/llm.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/formats/gguf/gguf_writer.h"
#include "ops/reference.h"
#include "tests/temp_file.h"
#include "tools/model_tools/synthetic_model.h"

namespace baton {
namespace {

using testing::TempFile;

// Rows of 256 and 512 elements: whole super-blocks for the K-quants.
SyntheticShape shape() {
  return SyntheticShape{.n_embd = 256,
                        .n_layer = 2,
                        .n_head = 4,
                        .n_head_kv = 2,
                        .n_ff = 512,
                        .n_vocab = 300,
                        .n_ctx = 256};
}

// Copies `from` with every quantized tensor decoded to F32 by the reference dequantizer.
void write_dequantized(const std::filesystem::path& from, const std::filesystem::path& to) {
  const gguf::GgufFile file = gguf::GgufFile::open(from);
  gguf::GgufWriter writer;
  for (const auto& [key, value] : file.metadata()) writer.add(key, value);
  for (const gguf::TensorInfo& info : file.tensors()) {
    const Tensor t = file.tensor(info.name);
    if (!is_quantized(t.dtype())) {
      writer.add_tensor(info.name, t);
      continue;
    }
    Tensor f32 = Tensor::host(DType::kF32, t.shape());
    for (int64_t r = 0; r < t.rows(); ++r) {
      reference::dequantize_row(t, r, f32.data<float>() + r * t.row_length());
    }
    writer.add_tensor(info.name, f32);
  }
  writer.write(to);
}

constexpr int kSteps = 16;

GenerationParams greedy_params(int max_tokens) {
  GenerationParams params;
  params.sampling.temperature = 0.0f;
  params.max_tokens = max_tokens;
  params.ignore_eos = true;
  params.logprobs = 5;
  return params;
}

// The F32 model's greedy continuation, with its log-probabilities.
GenerationOutput f32_greedy(const std::filesystem::path& model) {
  LLM llm(LLMOptions{.model = model.string(), .backend = "cpu", .threads = 2});
  return llm.generate("Once upon a time", greedy_params(kSteps));
}

// The quantized model's next-token log-probabilities after each prefix of that continuation, as
// one batch (so prefill runs many rows of x through the kernels at once).
std::vector<TokenLogprobs> teacher_forced(const std::filesystem::path& model,
                                          const GenerationOutput& reference) {
  LLM llm(LLMOptions{.model = model.string(), .backend = "cpu", .threads = 2});
  std::vector<Request> requests;
  std::vector<int32_t> history = reference.prompt_tokens;
  for (int32_t token : reference.tokens) {
    requests.push_back({.params = greedy_params(1), .prompt_tokens = history});
    history.push_back(token);
  }
  std::vector<TokenLogprobs> out;
  for (const GenerationOutput& o : llm.generate(requests)) {
    out.push_back(o.completions.at(0).logprobs.at(0));
  }
  return out;
}

// The K-quant kernels quantize activations to int8 where the F32 model's kernels do not (as
// the Q8_0 / Q4_0 kernels do), which moves these logits by a few percent of their spread
// (chosen log-probabilities moved by 0.029 at most on these models, whose logits have a
// standard deviation of ~0.8: weights of std 0.05 over rows of 256). So at every step of the
// F32 model's greedy continuation its token must be the quantized model's greedy pick or within
// kTieTolerance of it, with log-probabilities within kLogprobTolerance. A wrong scale or code in
// a kernel moves logits by about their spread.
constexpr double kLogprobTolerance = 0.08;
constexpr double kTieTolerance = 0.1;

void expect_same_greedy_steps(const GenerationOutput& f32, const std::vector<TokenLogprobs>& q) {
  const std::vector<TokenLogprobs>& f = f32.completions.at(0).logprobs;
  ASSERT_EQ(f.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(q.size(), static_cast<size_t>(kSteps));
  for (int i = 0; i < kSteps; ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    const int32_t token = f[i].chosen.token;
    const TokenLogprob* mine = nullptr;
    for (const TokenLogprob& t : q[i].top) {
      if (t.token == token) mine = &t;
    }
    ASSERT_NE(mine, nullptr) << "the f32 greedy token " << token << " is not in the top 5";
    EXPECT_GE(mine->logprob, q[i].chosen.logprob - kTieTolerance)
        << "quantized picks " << q[i].chosen.token << ", f32 " << token;
    EXPECT_NEAR(mine->logprob, f[i].chosen.logprob, kLogprobTolerance);
  }
}

struct Case {
  DType type;
  std::optional<DType> output_type;
  const char* name;
};

class QuantizedModel : public ::testing::TestWithParam<Case> {};

TEST_P(QuantizedModel, LoadsAndGeneratesAsItsF32Dequantization) {
  const Case& c = GetParam();
  TempFile quantized(std::string(c.name) + ".gguf"), f32(std::string(c.name) + "_f32.gguf");
  // Weights of std 0.05 give logits peaked enough that near ties are rare.
  write_synthetic_model({.shape = shape(),
                         .weight_type = c.type,
                         .output_type = c.output_type,
                         .seed = 3,
                         .weight_std = 0.05f},
                        quantized.path());
  const gguf::GgufFile file = gguf::GgufFile::open(quantized.path());
  for (const gguf::TensorInfo& t : file.tensors()) {
    const DType expected = t.shape.size() == 1         ? DType::kF32
                           : t.name == "output.weight" ? c.output_type.value_or(c.type)
                                                       : c.type;
    EXPECT_EQ(t.ggml_type, static_cast<uint32_t>(expected)) << t.name;
  }
  write_dequantized(quantized.path(), f32.path());
  const GenerationOutput reference = f32_greedy(f32.path());
  expect_same_greedy_steps(reference, teacher_forced(quantized.path(), reference));
}

INSTANTIATE_TEST_SUITE_P(
    Types, QuantizedModel,
    ::testing::Values(
        Case{DType::kQ4_1, std::nullopt, "q4_1"}, Case{DType::kQ5_0, std::nullopt, "q5_0"},
        Case{DType::kQ5_1, std::nullopt, "q5_1"}, Case{DType::kQ2_K, std::nullopt, "q2_K"},
        Case{DType::kQ3_K, std::nullopt, "q3_K"}, Case{DType::kQ4_K, std::nullopt, "q4_K"},
        Case{DType::kQ5_K, std::nullopt, "q5_K"}, Case{DType::kQ6_K, std::nullopt, "q6_K"},
        Case{DType::kQ4_K, DType::kQ6_K, "q4_K_with_q6_K_output"}),
    [](const auto& info) { return std::string(info.param.name); });

// An F32 model with rows of 64: its attn_q.weight retyped to Q4_K in the header cannot be whole
// super-blocks of 256.
TEST(QuantizedModelErrors, RowsThatAreNotWholeBlocksNameTheTensor) {
  TempFile f32("rows_of_64.gguf");
  write_synthetic_model({.shape = {.n_embd = 64,
                                   .n_layer = 1,
                                   .n_head = 4,
                                   .n_head_kv = 2,
                                   .n_ff = 128,
                                   .n_vocab = 300,
                                   .n_ctx = 64},
                         .weight_type = DType::kF32},
                        f32.path());
  std::ifstream in(f32.path(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The tensor's info: name, n_dims = 2, ne = {64, 64}, then its ggml type (f32 = 0).
  const std::string name = "blk.0.attn_q.weight";
  std::string info = name + std::string("\x02\0\0\0", 4);
  const char ne[16] = {64, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0};
  info += std::string(ne, 16);
  const size_t at = bytes.find(info);
  ASSERT_NE(at, std::string::npos);
  uint32_t type = 0;
  std::memcpy(&type, bytes.data() + at + info.size(), 4);
  ASSERT_EQ(type, 0u) << "attn_q.weight is expected to be f32";
  type = static_cast<uint32_t>(DType::kQ4_K);
  std::memcpy(bytes.data() + at + info.size(), &type, 4);
  TempFile patched("q4_K_rows.gguf");
  std::ofstream(patched.path(), std::ios::binary) << bytes;
  try {
    LLM llm(LLMOptions{.model = patched.path().string(), .backend = "cpu"});
    FAIL() << "a q4_K tensor with rows of 64 was loaded";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidModel) << message;
    EXPECT_NE(message.find("'" + name + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("not a multiple of the q4_K block size 256"), std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace baton
