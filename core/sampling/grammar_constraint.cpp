#include "core/sampling/grammar_constraint.h"

#include <algorithm>

#include "baton/error.h"

namespace baton {
namespace {

// Masks kept per sequence, a bit per token: at most 64, in at most 256 KiB (13 masks of a
// 150k vocabulary).
constexpr size_t kCachedMasks = 64;
constexpr size_t kCachedMaskBytes = 256 << 10;

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

GrammarConstraint::GrammarConstraint(std::shared_ptr<const Grammar> grammar,
                                     std::shared_ptr<const TokenPieces> pieces, bool may_end,
                                     std::vector<int32_t> stop_tokens)
    : matcher_(std::move(grammar)),
      pieces_(std::move(pieces)),
      may_end_(may_end),
      stop_tokens_(std::move(stop_tokens)) {
  std::erase_if(stop_tokens_, [&](int32_t id) {
    return id < 0 || static_cast<size_t>(id) >= pieces_->pieces.size();
  });
}

void GrammarConstraint::allowed(std::vector<char>& allowed) {
  if (matcher_.compact()) masks_.clear();  // their keys named stacks that are gone
  const auto cached = masks_.find(matcher_.state());
  if (cached != masks_.end()) {
    allowed.resize(pieces_->pieces.size());
    for (size_t id = 0; id < allowed.size(); ++id)
      allowed[id] = cached->second[id / 64] >> (id % 64) & 1;
    return;
  }
  compute(allowed);
  std::vector<uint64_t> bits((allowed.size() + 63) / 64);
  for (size_t id = 0; id < allowed.size(); ++id)
    bits[id / 64] |= uint64_t{allowed[id] != 0} << (id % 64);
  const size_t room = std::max<size_t>(1, kCachedMaskBytes / (bits.size() * sizeof(uint64_t)));
  if (masks_.size() >= std::min(room, kCachedMasks)) masks_.clear();
  masks_.emplace(matcher_.state(), std::move(bits));
}

// Tokens in the order of their text, each checked from the state after the prefix it shares
// with the one before (kept per byte in `path`), so a shared prefix is walked once, and every
// token under a prefix the grammar refuses is skipped without a step.
void GrammarConstraint::compute(std::vector<char>& allowed) const {
  const std::vector<std::string>& pieces = pieces_->pieces;
  allowed.assign(pieces.size(), 0);
  if (!matcher_.finished()) {
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
      if (dead == SIZE_MAX) allowed[id] = matcher_.could_complete(path.back());
    }
  }
  if (matcher_.complete()) {
    if (may_end_) {
      for (const int32_t id : pieces_->end_tokens) allowed[id] = 1;
    }
    for (const int32_t id : stop_tokens_) allowed[id] = 1;
  }
}

void GrammarConstraint::accept(int32_t token) {
  const bool ends =
      (may_end_ && std::ranges::find(pieces_->end_tokens, token) != pieces_->end_tokens.end()) ||
      std::ranges::find(stop_tokens_, token) != stop_tokens_.end();
  if (ends && matcher_.complete()) return;
  if (pieces_->pieces[token].empty() || !matcher_.advance(pieces_->pieces[token])) {
    throw Error(ErrorCategory::kInternal, "token " + std::to_string(token) +
                                              " was sampled but the grammar does not allow it");
  }
}

}  // namespace baton
