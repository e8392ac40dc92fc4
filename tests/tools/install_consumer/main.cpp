// Uses only the installed public headers: opening a missing model must throw baton::Error.
#include <baton/baton.h>
#include <baton/error.h>
#include <baton/llm.h>

#include <cstdio>

int main() {
  try {
    baton::LLM llm(baton::LLMOptions{.model = "/nonexistent.gguf"});
  } catch (const baton::Error& e) {
    std::printf("installed Baton reports: %s\n", e.what());
    return e.category() == baton::ErrorCategory::kIo ? 0 : 1;
  }
  return 1;
}
