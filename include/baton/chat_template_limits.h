#pragma once

#include <cstdint>

namespace baton {

// Bounds on a model's chat template, which is code from the model file and so as untrusted as
// the file: a template that loops without end, recurses or builds a huge string stops with an
// error naming the limit instead of hanging or exhausting memory. The defaults are far above what
// published templates use (docs/serving.md, "Limits").
struct ChatTemplateLimits {
  // Statements run plus expressions evaluated in one render.
  int64_t max_steps = 5'000'000;
  // Bytes of the rendered prompt, and of any one string or list a render builds.
  int64_t max_output_bytes = int64_t{32} << 20;
  // Nested macro calls when rendering, and nested expressions and blocks when parsing.
  int32_t max_depth = 100;
};

}  // namespace baton
