#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/formats/gguf/gguf_file.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "tools/commands.h"

namespace baton::cli {
namespace {

struct TokenizeFlags {
  std::string model;
  std::string prompt;
  bool no_add_special = false;
  bool parse_special = false;
};

}  // namespace

Action add_tokenize_command(CLI::App& app) {
  auto flags = std::make_shared<TokenizeFlags>();
  CLI::App* cmd = app.add_subcommand("tokenize", "print a text's token ids as a JSON array");
  cmd->add_option("-m,--model", flags->model, "GGUF model or vocabulary file")->required();
  cmd->add_option("-p,--prompt", flags->prompt, "text to tokenize")->required();
  cmd->add_flag("--no-add-special", flags->no_add_special, "do not add BOS/EOS");
  cmd->add_flag("--parse-special", flags->parse_special,
                "treat special-token text such as <s> as tokens");
  return [flags] {
    // Only the vocabulary is read, so vocabulary-only GGUF files work too.
    const auto file = gguf::GgufFile::open(flags->model);
    const auto tokenizer = Tokenizer::create(vocabulary_from_gguf(file));
    const std::vector<int32_t> ids =
        tokenizer->encode(flags->prompt, !flags->no_add_special, flags->parse_special);
    std::cout << nlohmann::json(ids).dump() << "\n";
    return 0;
  };
}

}  // namespace baton::cli
