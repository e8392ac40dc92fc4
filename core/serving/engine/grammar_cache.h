#pragma once

// The grammars of recent requests, parsed once and shared with their stack tables and masks
// (SharedGrammar): requests with the same constraint (one JSON Schema served to many clients,
// one set of tools) reuse each other's masks instead of walking the vocabulary again.

#include <list>
#include <string>
#include <utility>

#include "core/serving/sampling/grammar_constraint.h"

namespace baton {

class GrammarCache {
 public:
  // The shared grammar of `gbnf`, parsed at its first use. Throws what parse_gbnf throws.
  SharedGrammar get(const std::string& gbnf);

 private:
  std::list<std::pair<std::string, SharedGrammar>> recent_;  // most recently used first
};

}  // namespace baton
