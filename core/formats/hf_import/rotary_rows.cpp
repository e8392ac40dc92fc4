#include "core/formats/hf_import/rotary_rows.h"

namespace baton::hf {

int64_t rotate_half_source_row(int64_t row, int64_t head_dim) {
  const int64_t head = row / head_dim, within = row % head_dim;
  const int64_t pair = within / 2, half = within % 2;
  return head * head_dim + half * (head_dim / 2) + pair;
}

}  // namespace baton::hf
