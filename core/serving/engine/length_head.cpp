#include "core/serving/engine/length_head.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "baton/error.h"

namespace baton {
namespace {

constexpr const char* kFormat = "baton-length-head";

std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

double LengthHead::predict(std::span<const float> logits, const LengthFeatures& request) const {
  double sum = bias + max_tokens_weight * std::log2(static_cast<double>(request.max_tokens)) +
               (request.has_stop ? stop_weight : 0.0);
  for (size_t i = 0; i < logit_weights.size(); ++i) sum += double{logit_weights[i]} * logits[i];
  return tokens_of(sum, request.max_tokens);
}

double LengthHead::tokens_of(double log_length, int32_t max_tokens) {
  const double most = std::max(1.0, static_cast<double>(max_tokens));
  if (!std::isfinite(log_length)) return most;
  return std::clamp(std::expm1(log_length), 1.0, most);
}

void LengthHead::write(const std::filesystem::path& path) const {
  const nlohmann::json j = {
      {"format", kFormat},          {"model", hex(model)}, {"max_tokens_weight", max_tokens_weight},
      {"stop_weight", stop_weight}, {"bias", bias},        {"logit_weights", logit_weights}};
  std::ofstream out(path);
  out << j.dump() << "\n";
  if (!out) {
    throw Error(ErrorCategory::kIo, "cannot write " + path.string() + ": " + std::strerror(errno));
  }
}

LengthHead LengthHead::read(const std::filesystem::path& path, int64_t n_vocab, uint64_t model) {
  std::ifstream in(path);
  if (!in) {
    throw Error(ErrorCategory::kIo, "cannot read " + path.string() + ": " + std::strerror(errno));
  }
  LengthHead head;
  bool names_its_model = false;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (j.at("format") != kFormat)
      throw std::invalid_argument("its format is not " + std::string(kFormat));
    head.logit_weights = j.at("logit_weights").get<std::vector<float>>();
    head.max_tokens_weight = j.at("max_tokens_weight").get<double>();
    head.stop_weight = j.at("stop_weight").get<double>();
    head.bias = j.at("bias").get<double>();
    names_its_model = j.contains("model");
    if (names_its_model) head.model = std::stoull(j.at("model").get<std::string>(), nullptr, 16);
  } catch (const std::exception& e) {
    throw Error(ErrorCategory::kInvalidArgument,
                path.string() + " is not a length head (`baton length-head -o`): " + e.what());
  }
  if (!names_its_model) {
    throw Error(ErrorCategory::kInvalidArgument,
                path.string() + " is a length head from before heads named their model: fit it " +
                    "again with `baton length-head -o`");
  }
  if (static_cast<int64_t>(head.logit_weights.size()) != n_vocab) {
    throw Error(ErrorCategory::kInvalidArgument,
                path.string() + " is a length head for a vocabulary of " +
                    std::to_string(head.logit_weights.size()) + " tokens; this model has " +
                    std::to_string(n_vocab));
  }
  if (head.model != model) {
    throw Error(ErrorCategory::kInvalidArgument,
                path.string() + " is a length head for another model file (hash " +
                    hex(head.model) + "; this one's is " + hex(model) +
                    "): fit one for this model with `baton length-head -o`");
  }
  return head;
}

}  // namespace baton
