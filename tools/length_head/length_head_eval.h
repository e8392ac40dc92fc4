#pragma once

// Issue 23's second length predictor: a ridge regression head on the served model's hidden
// state after prefill, fitted on a `baton serve --length-log` file and scored against the online
// predictor (core/serving/engine/length_predictor.h) on the log's last requests, which neither has
// learned from when it predicts them.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/runtime/tensor.h"
#include "core/serving/engine/length_head.h"
#include "tools/length_head/length_record.h"

namespace baton {

class Backend;
class Model;
namespace gguf {
class GgufFile;
}

struct LengthHeadOptions {
  double holdout = 0.2;     // the last fraction of the log, in the order it was written
  int32_t block_size = 16;  // the server's --kv-block-size: the online predictor's prefix keys
};

struct PredictorScore {
  double mean_absolute_error = 0;  // tokens
  double kendall_tau = 0;          // rank agreement with the actual lengths, what sjf needs
};

// The head as fitted: log1p(tokens) ≈ hidden_weights · h + max_tokens_weight · log2(max_tokens)
// + stop_weight · has_stop + bias, for the hidden state h.
struct HiddenLengthHead {
  std::vector<double> hidden_weights;
  double max_tokens_weight = 0, stop_weight = 0, bias = 0;
  // Tokens as the served head gives them (LengthHead::tokens_of), or the record's hint.
  double predict(std::span<const float> hidden, const LengthRecord& record) const;
};

struct LengthHeadReport {
  size_t trained = 0, held_out = 0;
  int64_t hidden_size = 0;
  double penalty = 0;       // the ridge penalty cross-validation chose
  PredictorScore online;    // learning from every request before the one it predicts
  PredictorScore head;      // fitted on the requests before the held-out ones
  HiddenLengthHead fitted;  // then fitted on the whole log at the same penalty: what -o writes
  bool head_wins() const {
    return head.kendall_tau > online.kendall_tau &&
           head.mean_absolute_error < online.mean_absolute_error;
  }
};

// A prompt's features for the head: the model's hidden state after it.
using HiddenState = std::function<std::vector<float>(std::span<const int32_t> prompt)>;

// Throws Error(kInvalidArgument) when the log is too short to split.
LengthHeadReport evaluate_length_head(std::span<const LengthRecord> log, const HiddenState& hidden,
                                      const LengthHeadOptions& options);

// `head` rewritten over the logits that the output projection `output` ([n_vocab, n_embd], any
// type) makes of the hidden state: u = W (WᵀW)⁻¹ w, so that u · (W h) = w · h. Throws
// Error(kInvalidArgument) when the shapes do not match.
LengthHead head_over_logits(const HiddenLengthHead& head, const Tensor& output);

// A prompt's last logits row, as the engine samples the first token from.
using LogitsAfter = std::function<std::vector<float>(std::span<const int32_t> prompt)>;

// The largest gap, in log1p(tokens), between what the head over the logits gives from each
// record's real logits and what the fitted head gives from its hidden state: the rounding the
// rewrite and the served logits add (hints left out, since both would take them as they are).
double logit_form_gap(const LengthHead& over_logits, const HiddenLengthHead& fitted,
                      std::span<const LengthRecord> log, const HiddenState& hidden,
                      const LogitsAfter& logits);

// The model file's output projection: output.weight, or token_embd.weight when they are tied.
Tensor output_projection(const gguf::GgufFile& file);

// The final-normed hidden state of the prompt's last token (what the vocabulary projection
// reads to pick the first output token), the prompt prefilled alone from position 0 in a cache
// of `context` tokens. `model` is a whole model in this process.
HiddenState prompt_hidden_state(const Model& model, Backend& backend, int32_t context);
// The same prompt's last logits row, the model run as a whole in this process.
LogitsAfter prompt_logits(const Model& model, Backend& backend, int32_t context);

}  // namespace baton
