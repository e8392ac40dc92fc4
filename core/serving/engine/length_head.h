#pragma once

// The second length predictor (docs/scheduling.md): a ridge regression head that `baton
// length-head` fits offline on the served model's final hidden state after prefill, from
// `baton serve --length-log` records. The head is linear in that hidden state h, and the
// prompt's last logits row is W·h for the output projection W, so the tool rewrites the head as
// weights over the logits (u with uᵀW = the head's weights): the engine applies it to the row it
// samples the first token from, with nothing more computed or carried between ranks.

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "core/serving/engine/length_predictor.h"

namespace baton {

struct LengthHead {
  std::vector<float> logit_weights;  // one per vocabulary entry
  // The model file it was fitted for (model_hash in core/api/handshake.h): its weights over the
  // logits stand for a fit on that model's hidden states, through that model's projection.
  uint64_t model = 0;
  // log1p(tokens) ≈ logit_weights · logits + max_tokens_weight · log2(max_tokens) +
  // stop_weight · has_stop + bias
  double max_tokens_weight = 0, stop_weight = 0, bias = 0;

  // Expected output tokens, from 1 to max_tokens, from the logits row of the prompt's last token.
  double predict(std::span<const float> logits, const LengthFeatures& request) const;
  // The head's sum, log1p(tokens), as tokens: at least 1, as the online predictor's (a
  // prediction of 0 reads as none to the scheduler), at most max_tokens, and max_tokens for a
  // sum that is not a number.
  static double tokens_of(double log_length, int32_t max_tokens);

  void write(const std::filesystem::path& path) const;
  // Throws Error(kInvalidArgument) naming the problem when the file is not a head, or not one
  // for the model file of hash `model` with a vocabulary of n_vocab; Error(kIo) when it cannot
  // be read.
  static LengthHead read(const std::filesystem::path& path, int64_t n_vocab, uint64_t model);
};

}  // namespace baton
