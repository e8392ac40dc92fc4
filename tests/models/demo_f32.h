#pragma once

#include <filesystem>

#include "tests/temp_file.h"
#include "tests/test_data.h"
#include "tools/model_tools/quantize_model.h"

namespace baton::testing {

// The demo model with f32 weights, written once per test process, for tests that compare a
// request's tokens across batch compositions, samples or ranks. f32 weights take the same kernel
// at every batch size on every host; the f16 ones switch to a bf16 GEMM from a few rows of x
// where oneDNN has a bf16 matmul (AVX-512 hosts), which can flip a near-tie between two tokens.
inline const std::filesystem::path& demo_model_f32() {
  struct Copy {
    Copy() {
      quantize_model(demo_model(), file.path(), *find_quantize_preset("f32"),
                     {.threads = 1, .pure = true});
    }
    TempFile file{"demo_f32.gguf"};
  };
  static const Copy copy;
  return copy.file.path();
}

}  // namespace baton::testing
