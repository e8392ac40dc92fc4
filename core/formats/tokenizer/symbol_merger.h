#pragma once

#include <algorithm>
#include <optional>
#include <queue>
#include <string_view>
#include <vector>

#include "core/formats/tokenizer/utf8.h"

namespace baton {

// The merge loop shared by SentencePiece BPE and byte-level BPE: start from single characters
// and repeatedly join the adjacent pair with the best priority (ties go to the leftmost pair)
// until no pair has one. A priority queue with lazy invalidation over a linked list of symbols
// keeps this O(n log n) in the word length.
//
// `priority(merged, left_length)` returns the priority of joining the two adjacent symbols
// that spell `merged` (the left one is its first left_length bytes), higher first, or nullopt
// when they may not be joined. Returns the final symbols, in order, as views into `text`.
template <typename Priority>
std::vector<std::string_view> merge_symbols(std::string_view text, const Priority& priority) {
  struct Symbol {
    size_t offset;
    size_t length;  // 0 once merged into its left neighbour
    int prev;
    int next;
  };
  struct Candidate {
    double priority;
    int left;
    int right;
    size_t length;  // of both symbols when queued; a different length means it is stale
  };
  struct Worse {
    bool operator()(const Candidate& a, const Candidate& b) const {
      return a.priority < b.priority || (a.priority == b.priority && a.left > b.left);
    }
  };

  std::vector<Symbol> symbols;
  for (size_t offset = 0; offset < text.size();) {
    const size_t length = std::min(utf8::sequence_length(text[offset]), text.size() - offset);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({offset, length, index - 1, -1});
    if (index > 0) symbols[index - 1].next = index;
    offset += length;
  }

  std::priority_queue<Candidate, std::vector<Candidate>, Worse> queue;
  const auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& a = symbols[left];
    const Symbol& b = symbols[right];
    const std::string_view merged = text.substr(a.offset, a.length + b.length);
    if (const std::optional<double> p = priority(merged, a.length)) {
      queue.push({*p, left, right, merged.size()});
    }
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) consider(i - 1, i);

  while (!queue.empty()) {
    const Candidate best = queue.top();
    queue.pop();
    Symbol& left = symbols[best.left];
    Symbol& right = symbols[best.right];
    if (left.length == 0 || right.length == 0 || left.next != best.right ||
        left.length + right.length != best.length) {
      continue;
    }
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = best.left;
    consider(left.prev, best.left);
    consider(best.left, left.next);
  }

  std::vector<std::string_view> pieces;
  for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    pieces.push_back(text.substr(symbols[i].offset, symbols[i].length));
  }
  return pieces;
}

}  // namespace baton
