#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "core/formats/hf_import/convert_checkpoint.h"
#include "tools/commands.h"

namespace baton::cli {
namespace {

struct ConvertFlags {
  std::string input;
  std::string output;
  std::string out_type = "f16";
  std::string name;
};

const std::map<std::string, DType> kOutTypes = {
    {"f32", DType::kF32}, {"f16", DType::kF16}, {"bf16", DType::kBF16}};

}  // namespace

Action add_convert_command(CLI::App& app) {
  auto f = std::make_shared<ConvertFlags>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "write a Hugging Face Llama/Mistral/Qwen2/Phi-3/Gemma 2 checkpoint directory as a GGUF file");
  cmd->add_option(
         "input", f->input,
         "checkpoint directory: config.json, *.safetensors, tokenizer.model or tokenizer.json")
      ->required();
  cmd->add_option("-o,--output", f->output, "GGUF file to write")->required();
  cmd->add_option("--outtype", f->out_type, "type of the weight matrices (norms stay f32)")
      ->check(CLI::IsMember(kOutTypes))
      ->capture_default_str();
  cmd->add_option("--name", f->name, "general.name (default: the directory's name)");

  return [f] {
    const auto start = std::chrono::steady_clock::now();
    const hf::ConvertSummary s = hf::convert_checkpoint(
        f->input, f->output, {.out_type = kOutTypes.at(f->out_type), .name = f->name});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("wrote %s (%s) in %.1f s\n", f->output.c_str(), f->out_type.c_str(), seconds);
    std::printf("tensors: %d, parameters: %.2f M, vocabulary: %d tokens%s\n", s.n_tensors,
                static_cast<double>(s.n_params) / 1e6, s.n_vocab,
                s.tied_embeddings ? ", output tied to token_embd" : "");
    std::printf("size: %.2f MiB\n", static_cast<double>(s.file_bytes) / (1024.0 * 1024.0));
    return 0;
  };
}

}  // namespace baton::cli
