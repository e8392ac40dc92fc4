#include "core/runtime/op.h"

#include <iterator>
#include <string>

#include "baton/error.h"

namespace baton {

const OpSchema& op_schema(OpKind op) {
  const auto index = static_cast<size_t>(op);
  if (index >= std::size(kOpSchemas)) {
    throw Error(ErrorCategory::kInternal, "op kind " + std::to_string(index) + " has no schema");
  }
  return kOpSchemas[index];
}

std::string_view to_string(OpKind op) {
  const auto index = static_cast<size_t>(op);
  return index < std::size(kOpSchemas) ? kOpSchemas[index].name : "unknown";
}

bool has_op_params(OpKind op, const OpParams& params) {
  switch (op) {
#define BATON_OP_PARAMS(kind, name, inputs, param_type, summary) \
  case OpKind::kind:                                             \
    return std::holds_alternative<param_type>(params);
    BATON_OP_TABLE(BATON_OP_PARAMS)
#undef BATON_OP_PARAMS
  }
  return false;
}

void validate_paged_batch(const PagedBatch& batch, int64_t n_tokens, int64_t n_blocks,
                          int64_t block_size) {
  auto fail = [](const std::string& message) {
    throw Error(ErrorCategory::kInvalidArgument, "paged batch: " + message);
  };
  if (block_size <= 0 || batch.block_size != block_size) {
    fail("block_size " + std::to_string(batch.block_size) + " does not match the cache's " +
         std::to_string(block_size));
  }
  if (batch.token_seq.size() != static_cast<size_t>(n_tokens) ||
      batch.token_pos.size() != static_cast<size_t>(n_tokens)) {
    fail("token_seq and token_pos must hold " + std::to_string(n_tokens) + " entries, got " +
         std::to_string(batch.token_seq.size()) + " and " + std::to_string(batch.token_pos.size()));
  }
  for (size_t s = 0; s < batch.block_tables.size(); ++s) {
    for (int32_t block : batch.block_tables[s]) {
      if (block < 0 || block >= n_blocks) {
        fail("sequence " + std::to_string(s) + " names block " + std::to_string(block) +
             " outside the cache's " + std::to_string(n_blocks) + " blocks");
      }
    }
  }
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int32_t seq = batch.token_seq[t];
    const int32_t pos = batch.token_pos[t];
    if (seq < 0 || static_cast<size_t>(seq) >= batch.block_tables.size()) {
      fail("token " + std::to_string(t) + " has sequence " + std::to_string(seq) + " of " +
           std::to_string(batch.block_tables.size()));
    }
    if (pos < 0 || static_cast<size_t>(pos / block_size) >= batch.block_tables[seq].size()) {
      fail("token " + std::to_string(t) + " has position " + std::to_string(pos) + " beyond the " +
           std::to_string(batch.block_tables[seq].size()) + " blocks of sequence " +
           std::to_string(seq));
    }
  }
}

}  // namespace baton
