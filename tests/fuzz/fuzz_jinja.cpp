// Any text as a chat template, parsed and rendered with a typical conversation. A template is
// code from a model file: it may be refused (a baton::Error naming the line and column), but
// never crash the process.

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "core/formats/chat/chat_template.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nlohmann::json context = {{"messages",
                                          {{{"role", "system"}, {"content", "You are terse."}},
                                           {{"role", "user"}, {"content", "Hello"}},
                                           {{"role", "assistant"}, {"content", "Hi."}},
                                           {{"role", "user"}, {"content", "Who made the light?"}}}},
                                         {"add_generation_prompt", true},
                                         {"bos_token", "<s>"},
                                         {"eos_token", "</s>"}};
  try {
    const baton::ChatTemplate chat_template(baton::fuzz::as_text(data, size));
    chat_template.render(context);
  } catch (const baton::Error&) {
  }
  return 0;
}
