#include "tools/bench_serve/prompt_dataset.h"

#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string_view>

#include "baton/error.h"

namespace baton::bench_serve {
namespace {

// Short, frequent words: each is a single token (with its leading space) in the Llama 2 and
// Llama 3 vocabularies, and in most other BPE vocabularies trained on English.
constexpr std::array<std::string_view, 100> kWords = {
    "the",    "of",    "and",   "to",    "in",     "is",   "that",   "for",    "it",     "as",
    "was",    "with",  "be",    "by",    "on",     "not",  "he",     "this",   "are",    "or",
    "his",    "from",  "at",    "which", "but",    "have", "an",     "had",    "they",   "you",
    "were",   "their", "one",   "all",   "we",     "can",  "her",    "has",    "there",  "been",
    "if",     "more",  "when",  "will",  "would",  "who",  "so",     "no",     "time",   "people",
    "year",   "way",   "day",   "man",   "thing",  "life", "world",  "school", "state",  "family",
    "group",  "hand",  "part",  "place", "case",   "week", "system", "work",   "number", "night",
    "point",  "home",  "water", "room",  "mother", "area", "money",  "story",  "fact",   "month",
    "right",  "book",  "eye",   "job",   "word",   "side", "kind",   "head",   "house",  "friend",
    "father", "power", "hour",  "game",  "line",   "end",  "law",    "car",    "city",   "name",
};

Error dataset_error(const std::string& path, const std::string& what) {
  return Error(ErrorCategory::kInvalidArgument, "dataset " + path + ": " + what);
}

int32_t record_max_tokens(const nlohmann::json& record, int32_t fallback, const std::string& path,
                          const std::string& where) {
  const auto it = record.find("max_tokens");
  if (it == record.end()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < 1) {
    throw dataset_error(path, where + ": max_tokens must be a positive integer");
  }
  return it->get<int32_t>();
}

std::string record_prompt(const nlohmann::json& record, const std::string& path,
                          const std::string& where) {
  const auto it = record.find("prompt");
  if (it == record.end() || !it->is_string()) {
    throw dataset_error(path, where + ": needs a string \"prompt\"");
  }
  return it->get<std::string>();
}

std::vector<Prompt> parse_json_lines(const std::string& text, const std::string& path,
                                     int32_t max_tokens) {
  std::vector<Prompt> prompts;
  std::istringstream lines(text);
  std::string line;
  for (int64_t number = 1; std::getline(lines, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = "line " + std::to_string(number);
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (!record.is_object()) throw dataset_error(path, where + " is not a JSON object");
    prompts.push_back(
        {record_prompt(record, path, where), record_max_tokens(record, max_tokens, path, where)});
  }
  return prompts;
}

std::vector<Prompt> parse_json_array(const std::string& text, const std::string& path,
                                     int32_t max_tokens) {
  const nlohmann::json records = nlohmann::json::parse(text, nullptr, false);
  if (records.is_discarded()) throw dataset_error(path, "is not valid JSON");
  std::vector<Prompt> prompts;
  for (size_t i = 0; i < records.size(); ++i) {
    const nlohmann::json& record = records[i];
    const std::string where = "record " + std::to_string(i);
    if (!record.is_object()) throw dataset_error(path, where + " is not a JSON object");
    const auto turns = record.find("conversations");
    if (turns == record.end()) {
      prompts.push_back(
          {record_prompt(record, path, where), record_max_tokens(record, max_tokens, path, where)});
      continue;
    }
    if (!turns->is_array()) throw dataset_error(path, where + ": conversations is not an array");
    if (turns->empty()) continue;
    const nlohmann::json& first = turns->front();
    if (!first.is_object() || !first.contains("value") || !first["value"].is_string()) {
      throw dataset_error(path, where + ": conversations[0] needs a string \"value\"");
    }
    prompts.push_back(
        {first["value"].get<std::string>(), record_max_tokens(record, max_tokens, path, where)});
  }
  return prompts;
}

}  // namespace

std::vector<Prompt> random_prompts(int64_t count, int32_t words, int32_t max_tokens,
                                   uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Prompt> prompts(static_cast<size_t>(count));
  for (Prompt& p : prompts) {
    for (int32_t w = 0; w < words; ++w) {
      if (w > 0) p.text += ' ';
      p.text += kWords[rng() % kWords.size()];
    }
    p.max_tokens = max_tokens;
  }
  return prompts;
}

std::vector<Prompt> load_prompt_dataset(const std::string& path, int64_t count,
                                        int32_t max_tokens) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCategory::kIo, "cannot open dataset " + path);
  std::ostringstream contents;
  contents << in.rdbuf();
  const std::string text = contents.str();
  const size_t first = text.find_first_not_of(" \t\r\n");
  const std::vector<Prompt> records = first != std::string::npos && text[first] == '['
                                          ? parse_json_array(text, path, max_tokens)
                                          : parse_json_lines(text, path, max_tokens);
  if (records.empty()) throw dataset_error(path, "has no prompts");
  std::vector<Prompt> prompts;
  prompts.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) prompts.push_back(records[i % records.size()]);
  return prompts;
}

}  // namespace baton::bench_serve
