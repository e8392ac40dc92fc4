#include "core/serving/sampling/grammar_constraint.h"

#include <algorithm>

#include "baton/error.h"

namespace baton {
namespace {

// Mask bytes a constraint with tables of its own keeps: 64 masks of a 32k vocabulary, 13 of a
// 150k one.
constexpr size_t kPrivateMaskBytes = 256 << 10;

}  // namespace

std::shared_ptr<const TokenPieces> TokenPieces::of(const Tokenizer& tokenizer) {
  std::vector<std::string> pieces;
  std::vector<int32_t> end_tokens;
  pieces.reserve(tokenizer.vocab_size());
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    pieces.push_back(tokenizer.token_to_piece(id));
    if (tokenizer.is_end_of_generation(id)) end_tokens.push_back(id);
  }
  return from(std::move(pieces), std::move(end_tokens));
}

std::shared_ptr<const TokenPieces> TokenPieces::from(std::vector<std::string> pieces,
                                                     std::vector<int32_t> end_tokens) {
  auto out = std::make_shared<TokenPieces>();
  out->pieces = std::move(pieces);
  out->end_tokens = std::move(end_tokens);
  for (size_t id = 0; id < out->pieces.size(); ++id) {
    if (!out->pieces[id].empty()) out->by_text.push_back(static_cast<int32_t>(id));
  }
  std::ranges::sort(out->by_text,
                    [&](int32_t a, int32_t b) { return out->pieces[a] < out->pieces[b]; });
  return out;
}

const std::vector<uint64_t>* MaskCache::find(const GrammarMatcher::State& state) const {
  const auto it = masks_.find(state);
  return it == masks_.end() ? nullptr : &it->second;
}

void MaskCache::add(const GrammarMatcher::State& state, std::vector<uint64_t> bits) {
  const size_t bytes = bits.size() * sizeof(uint64_t);
  if (bytes_ + bytes > budget_bytes_) {
    masks_.clear();
    bytes_ = 0;
  }
  if (masks_.emplace(state, std::move(bits)).second) bytes_ += bytes;
}

SharedGrammar SharedGrammar::create(std::shared_ptr<const Grammar> grammar,
                                    size_t mask_budget_bytes) {
  return {std::move(grammar), std::make_shared<GrammarMatcher::StackTable>(),
          std::make_shared<MaskCache>(mask_budget_bytes)};
}

GrammarConstraint::GrammarConstraint(std::shared_ptr<const Grammar> grammar,
                                     std::shared_ptr<const TokenPieces> pieces, bool may_end,
                                     std::vector<int32_t> stop_tokens)
    : GrammarConstraint(SharedGrammar::create(std::move(grammar), kPrivateMaskBytes),
                        std::move(pieces), may_end, std::move(stop_tokens)) {}

GrammarConstraint::GrammarConstraint(const SharedGrammar& shared,
                                     std::shared_ptr<const TokenPieces> pieces, bool may_end,
                                     std::vector<int32_t> stop_tokens)
    : matcher_(shared.grammar, shared.stacks),
      masks_(shared.masks),
      pieces_(std::move(pieces)),
      may_end_(may_end),
      stop_tokens_(std::move(stop_tokens)) {
  std::erase_if(stop_tokens_, [&](int32_t id) {
    return id < 0 || static_cast<size_t>(id) >= pieces_->pieces.size();
  });
}

void GrammarConstraint::prepare() {
  if (prepared_) return;
  // compact() renumbers the matcher's state into a table of its own, whose states are not the
  // shared cache's keys, so from then on this constraint keeps its masks in a private cache.
  if (matcher_.compact()) masks_ = std::make_shared<MaskCache>(kPrivateMaskBytes);
  if (const std::vector<uint64_t>* cached = masks_->find(matcher_.state())) {
    prepared_ = *cached;
    return;
  }
  prepared_ = text_mask();
  masks_->add(matcher_.state(), *prepared_);
}

void GrammarConstraint::allowed(std::vector<char>& allowed) {
  prepare();
  const std::vector<uint64_t>& bits = *prepared_;
  allowed.resize(pieces_->pieces.size());
  for (size_t id = 0; id < allowed.size(); ++id) allowed[id] = bits[id / 64] >> (id % 64) & 1;
  if (matcher_.complete()) {
    if (may_end_) {
      for (const int32_t id : pieces_->end_tokens) allowed[id] = 1;
    }
    for (const int32_t id : stop_tokens_) allowed[id] = 1;
  }
}

// Tokens in the order of their text, each checked from the state after the prefix it shares
// with the one before (kept per byte in `path`), so a shared prefix is walked once, and every
// token under a prefix the grammar refuses is skipped without a step.
std::vector<uint64_t> GrammarConstraint::text_mask() const {
  const std::vector<std::string>& pieces = pieces_->pieces;
  std::vector<uint64_t> bits((pieces.size() + 63) / 64);
  if (matcher_.finished()) return bits;
  std::vector<GrammarMatcher::State> path{matcher_.state()};  // path[d]: after d bytes
  size_t dead = SIZE_MAX;  // the length of the refused prefix path ends at, if any
  std::string_view previous;
  for (const int32_t id : pieces_->by_text) {
    const std::string_view piece = pieces[id];
    const size_t common = std::ranges::mismatch(piece, previous).in1 - piece.begin();
    previous = piece;
    if (common >= dead) continue;
    dead = SIZE_MAX;
    path.resize(std::min(path.size(), common + 1));
    while (path.size() <= piece.size()) {
      GrammarMatcher::State next = path.back();
      if (!matcher_.feed(next, piece.substr(path.size() - 1, 1))) {
        dead = path.size();
        break;
      }
      path.push_back(std::move(next));
    }
    if (dead == SIZE_MAX && matcher_.could_complete(path.back())) {
      bits[id / 64] |= uint64_t{1} << (id % 64);
    }
  }
  return bits;
}

void GrammarConstraint::accept(int32_t token) {
  const bool ends =
      (may_end_ && std::ranges::find(pieces_->end_tokens, token) != pieces_->end_tokens.end()) ||
      std::ranges::find(stop_tokens_, token) != stop_tokens_.end();
  if (ends && matcher_.complete()) return;
  prepared_.reset();
  if (pieces_->pieces[token].empty() || !matcher_.advance(pieces_->pieces[token])) {
    throw Error(ErrorCategory::kInternal, "token " + std::to_string(token) +
                                              " was sampled but the grammar does not allow it");
  }
}

}  // namespace baton
