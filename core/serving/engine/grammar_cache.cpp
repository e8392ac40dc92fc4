#include "core/serving/engine/grammar_cache.h"

#include <algorithm>

namespace baton {
namespace {

// Grammars kept, and the mask bytes each may keep: 128 MiB at most, 4,096 masks of a 32k
// vocabulary per grammar.
constexpr size_t kGrammars = 8;
constexpr size_t kMaskBytesPerGrammar = size_t{16} << 20;

}  // namespace

SharedGrammar GrammarCache::get(const std::string& gbnf) {
  auto it = std::find_if(recent_.begin(), recent_.end(),
                         [&](const auto& entry) { return entry.first == gbnf; });
  if (it == recent_.end()) {
    auto grammar = std::make_shared<const Grammar>(parse_gbnf(gbnf));
    recent_.emplace_front(gbnf, SharedGrammar::create(std::move(grammar), kMaskBytesPerGrammar));
    if (recent_.size() > kGrammars) recent_.pop_back();
    return recent_.front().second;
  }
  recent_.splice(recent_.begin(), recent_, it);
  SharedGrammar& shared = recent_.front().second;
  // Those on the crowded table move off it one by one; newcomers start on a fresh one together.
  if (shared.stacks->crowded())
    shared = SharedGrammar::create(shared.grammar, kMaskBytesPerGrammar);
  return shared;
}

}  // namespace baton
