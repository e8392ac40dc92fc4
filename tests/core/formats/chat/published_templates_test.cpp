// Published chat templates render the prompt formats their models were trained on.
#include <gtest/gtest.h>

#include "core/formats/gguf/gguf_file.h"
#include "tests/core/formats/chat/chat_test_util.h"
#include "tests/core/formats/chat/published_templates.h"
#include "tests/test_data.h"

namespace baton::testing {
namespace {

constexpr const char* kSystem = "You are a concise assistant.";

// user, assistant, user; after a system message when with_system.
Json conversation(bool with_system) {
  Json messages = Json::array();
  if (with_system) messages.push_back({{"role", "system"}, {"content", kSystem}});
  messages.push_back({{"role", "user"}, {"content", "Hello!"}});
  messages.push_back({{"role", "assistant"}, {"content", "Hi! How can I help?"}});
  messages.push_back({{"role", "user"}, {"content", "What is the capital of France?"}});
  return messages;
}

Json context(Json messages, const char* bos, const char* eos, bool add_generation_prompt = true) {
  return {{"messages", std::move(messages)},
          {"bos_token", bos},
          {"eos_token", eos},
          {"add_generation_prompt", add_generation_prompt}};
}

const Json kNotAlternating =
    Json::array({{{"role", "user"}, {"content", "a"}}, {{"role", "user"}, {"content", "b"}}});

const Json kWeatherTool = Json::parse(R"({"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}})");

// A tool round trip: the user asks, the assistant calls, the tool answers.
Json tool_conversation(bool with_system) {
  Json messages = Json::array();
  if (with_system) messages.push_back({{"role", "system"}, {"content", kSystem}});
  messages.push_back({{"role", "user"}, {"content", "Weather in Paris?"}});
  messages.push_back(Json::parse(R"({"role": "assistant", "content": "", "tool_calls": [
      {"id": "call00001", "type": "function",
       "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]})"));
  messages.push_back({{"role", "tool"}, {"tool_call_id", "call00001"}, {"content", "21 C"}});
  return messages;
}

TEST(PublishedTemplates, Llama2Chat) {
  EXPECT_EQ(
      render(kLlama2Chat, context(conversation(true), "<s>", "</s>")),
      "<s>[INST] <<SYS>>\nYou are a concise assistant.\n<</SYS>>\n\nHello! [/INST] Hi! How can "
      "I help? </s><s>[INST] What is the capital of France? [/INST]");
  EXPECT_EQ(render_error(kLlama2Chat, context(kNotAlternating, "<s>", "</s>")),
            "chat template: Conversation roles must alternate user/assistant/user/assistant/...");
}

TEST(PublishedTemplates, Llama3Instruct) {
  const std::string turns =
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a concise "
      "assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|>"
      "<|start_header_id|>assistant<|end_header_id|>\n\nHi! How can I help?<|eot_id|>"
      "<|start_header_id|>user<|end_header_id|>\n\nWhat is the capital of France?<|eot_id|>";
  EXPECT_EQ(render(kLlama3Instruct, context(conversation(true), "<|begin_of_text|>", "<|eot_id|>")),
            turns + "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(render(kLlama3Instruct,
                   context(conversation(true), "<|begin_of_text|>", "<|eot_id|>", false)),
            turns);
}

TEST(PublishedTemplates, Llama31InstructWithoutTools) {
  EXPECT_EQ(
      render(kLlama31Instruct, context(conversation(true), "<|begin_of_text|>", "<|eot_id|>")),
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: "
      "December 2023\nToday Date: 26 Jul 2024\n\nYou are a concise assistant.<|eot_id|>"
      "<|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|><|start_header_id|>"
      "assistant<|end_header_id|>\n\nHi! How can I help?<|eot_id|><|start_header_id|>user"
      "<|end_header_id|>\n\nWhat is the capital of France?<|eot_id|><|start_header_id|>"
      "assistant<|end_header_id|>\n\n");
}

TEST(PublishedTemplates, Llama31InstructWithToolsAndToolCalls) {
  Json ctx = context(tool_conversation(true), "<|begin_of_text|>", "<|eot_id|>");
  ctx["tools"] = Json::array({kWeatherTool});
  ctx["date_string"] = "01 Jan 2025";
  EXPECT_EQ(
      render(kLlama31Instruct, ctx),
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\n"
      "Cutting Knowledge Date: December 2023\nToday Date: 01 Jan 2025\n\nYou are a concise "
      "assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nGiven the following "
      "functions, please respond with a JSON for a function call with its proper arguments "
      "that best answers the given prompt.\n\nRespond in the format {\"name\": function name, "
      "\"parameters\": dictionary of argument name and its value}.Do not use variables.\n\n"
      "{\n    \"type\": \"function\",\n    \"function\": {\n        \"name\": \"get_weather\",\n"
      "        \"parameters\": {\n            \"type\": \"object\",\n            \"properties\": "
      "{\n                \"city\": {\n                    \"type\": \"string\"\n"
      "                }\n            }\n        }\n    }\n}\n\nWeather in Paris?<|eot_id|>"
      "<|start_header_id|>assistant<|end_header_id|>\n\n{\"name\": \"get_weather\", "
      "\"parameters\": {\"city\": \"Paris\"}}<|eot_id|><|start_header_id|>ipython"
      "<|end_header_id|>\n\n\"21 C\"<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(PublishedTemplates, MistralInstructV01WithSystemMessage) {
  EXPECT_EQ(render(kMistralInstructV01, context(conversation(true), "<s>", "</s>")),
            "<s> [INST] You are a concise assistant.\n\nHello! [/INST] Hi! How can I help?</s> "
            "[INST] What is the capital of France? [/INST]");
  EXPECT_EQ(render_error(kMistralInstructV01, context(kNotAlternating, "<s>", "</s>")),
            "chat template: After the optional system message, conversation roles must alternate "
            "user/assistant/user/assistant/...");
}

TEST(PublishedTemplates, MixtralInstructRejectsSystemMessages) {
  EXPECT_EQ(render(kMixtralInstructV01, context(conversation(false), "<s>", "</s>")),
            "<s>[INST] Hello! [/INST]Hi! How can I help?</s>[INST] What is the capital of France? "
            "[/INST]");
  EXPECT_EQ(render_error(kMixtralInstructV01, context(conversation(true), "<s>", "</s>")),
            "chat template: Conversation roles must alternate user/assistant/user/assistant/...");
}

TEST(PublishedTemplates, MistralInstructV03PutsTheSystemMessageInTheLastTurn) {
  EXPECT_EQ(render(kMistralInstructV03, context(conversation(true), "<s>", "</s>")),
            "<s>[INST] Hello![/INST] Hi! How can I help?</s>[INST] You are a concise assistant.\n\n"
            "What is the capital of France?[/INST]");
  Json ctx = context(conversation(false), "<s>", "</s>");
  ctx["tools"] = Json::array({kWeatherTool});
  EXPECT_EQ(render(kMistralInstructV03, ctx),
            "<s>[INST] Hello![/INST] Hi! How can I help?</s>[AVAILABLE_TOOLS] [{\"type\": "
            "\"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": "
            "\"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}}}][/AVAILABLE_TOOLS]"
            "[INST] What is the capital of France?[/INST]");
  EXPECT_EQ(render_error(kMistralInstructV03, context(kNotAlternating, "<s>", "</s>")),
            "chat template: After the optional system message, conversation roles must alternate "
            "user/assistant/user/assistant/...");
}

TEST(PublishedTemplates, Qwen2InstructAddsItsDefaultSystemPrompt) {
  const std::string turns =
      "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nHi! How can I help?<|im_end|>\n"
      "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(render(kQwen2Instruct, context(conversation(true), "", "<|im_end|>")),
            "<|im_start|>system\nYou are a concise assistant.<|im_end|>\n" + turns);
  EXPECT_EQ(render(kQwen2Instruct, context(conversation(false), "", "<|im_end|>")),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" + turns);
}

TEST(PublishedTemplates, Qwen25InstructWithoutTools) {
  EXPECT_EQ(
      render(kQwen25Instruct, context(conversation(false), "", "<|im_end|>")),
      "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
      "assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nHi! "
      "How can I help?<|im_end|>\n<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"
      "<|im_start|>assistant\n");
}

TEST(PublishedTemplates, Qwen25InstructWithToolsAndToolCalls) {
  Json ctx = context(tool_conversation(true), "", "<|im_end|>");
  ctx["tools"] = Json::array({kWeatherTool});
  EXPECT_EQ(
      render(kQwen25Instruct, ctx),
      "<|im_start|>system\nYou are a concise assistant.\n\n# Tools\n\nYou may call one or more "
      "functions to assist with the user query.\n\nYou are provided with function signatures "
      "within <tools></tools> XML tags:\n<tools>\n{\"type\": \"function\", \"function\": "
      "{\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\", \"properties\": "
      "{\"city\": {\"type\": \"string\"}}}}}\n</tools>\n\nFor each function call, return a json "
      "object with function name and arguments within <tool_call></tool_call> XML tags:\n"
      "<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
      "</tool_call><|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>"
      "assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n21 C\n"
      "</tool_response><|im_end|>\n<|im_start|>assistant\n");
}

TEST(PublishedTemplates, Phi3MiniInstruct) {
  const std::string turns =
      "<|system|>\nYou are a concise assistant.<|end|>\n<|user|>\nHello!<|end|>\n<|assistant|>\n"
      "Hi! How can I help?<|end|>\n<|user|>\nWhat is the capital of France?<|end|>\n";
  EXPECT_EQ(render(kPhi3MiniInstruct, context(conversation(true), "<s>", "<|endoftext|>")),
            turns + "<|assistant|>\n");
  EXPECT_EQ(render(kPhi3MiniInstruct, context(conversation(true), "<s>", "<|endoftext|>", false)),
            turns + "<|endoftext|>");
}

TEST(PublishedTemplates, GemmaItMapsAssistantToModelAndRejectsSystem) {
  EXPECT_EQ(render(kGemmaIt, context(conversation(false), "<bos>", "<eos>")),
            "<bos><start_of_turn>user\nHello!<end_of_turn>\n<start_of_turn>model\nHi! How can I "
            "help?<end_of_turn>\n<start_of_turn>user\nWhat is the capital of France?<end_of_turn>\n"
            "<start_of_turn>model\n");
  EXPECT_EQ(render_error(kGemmaIt, context(conversation(true), "<bos>", "<eos>")),
            "chat template: System role not supported");
}

TEST(PublishedTemplates, Zephyr) {
  EXPECT_EQ(
      render(kZephyr, context(conversation(true), "<s>", "</s>")),
      "<|system|>\nYou are a concise assistant.</s>\n<|user|>\nHello!</s>\n<|assistant|>\nHi! "
      "How can I help?</s>\n<|user|>\nWhat is the capital of France?</s>\n<|assistant|>\n");
}

TEST(PublishedTemplates, DeepSeekCoderInstruct) {
  const char* bos =
      "<\xEF\xBD\x9C"
      "begin\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>";
  EXPECT_EQ(
      render(kDeepSeekCoderInstruct, context(conversation(true), bos, "<|EOT|>")),
      std::string(bos) +
          "You are a concise assistant.### Instruction:\nHello!\n### Response:\nHi! How can I "
          "help?\n<|EOT|>\n### Instruction:\nWhat is the capital of France?\n### Response:\n");
}

TEST(PublishedTemplates, DeepSeekR1DistillDropsEarlierReasoning) {
  Json messages = conversation(true);
  messages[2]["content"] = "<think>\nGreeting.\n</think>\n\nHi!";
  EXPECT_EQ(render(kDeepSeekR1Distill, context(messages, "<s>", "</s>")),
            "<s>You are a concise assistant.<\xEF\xBD\x9CUser\xEF\xBD\x9C>Hello!<\xEF\xBD\x9C"
            "Assistant\xEF\xBD\x9C>\n\nHi!<\xEF\xBD\x9C"
            "end\xE2\x96\x81of\xE2\x96\x81sentence"
            "\xEF\xBD\x9C><\xEF\xBD\x9CUser\xEF\xBD\x9C>What is the capital of France?<\xEF\xBD\x9C"
            "Assistant\xEF\xBD\x9C><think>\n");
}

// The template GGUF files carry, read with Baton's GGUF reader, with the special tokens taken
// from the file's vocabulary as a server would.
TEST(PublishedTemplates, Phi3TemplateFromGguf) {
  const auto path = shared_model("vocab/ggml-vocab-phi-3.gguf");
  BATON_REQUIRE_SHARED_FILE(path);
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  const std::string source = file.get_string("tokenizer.chat_template");
  EXPECT_EQ(source, kPhi3Mini128kInstruct);
  const std::vector<std::string> tokens = file.get_string_array("tokenizer.ggml.tokens");
  const auto bos = static_cast<size_t>(file.get_int("tokenizer.ggml.bos_token_id"));
  const auto eos = static_cast<size_t>(file.get_int("tokenizer.ggml.eos_token_id"));
  ASSERT_LT(bos, tokens.size());
  ASSERT_LT(eos, tokens.size());
  const ChatTemplate chat(source);
  EXPECT_EQ(
      chat.render_ordered(context(conversation(true), tokens[bos].c_str(), tokens[eos].c_str())),
      "<s><|user|>\nHello!<|end|>\n<|assistant|>\nHi! How can I help?<|end|>\n<|user|>\nWhat "
      "is the capital of France?<|end|>\n<|assistant|>\n");
}

TEST(DefaultChatTemplate, RendersChatML) {
  const ChatTemplate chat(default_chat_template());
  const std::string turns =
      "<|im_start|>system\nYou are a concise assistant.<|im_end|>\n<|im_start|>user\nHello!"
      "<|im_end|>\n<|im_start|>assistant\nHi! How can I help?<|im_end|>\n<|im_start|>user\nWhat is "
      "the capital of France?<|im_end|>\n";
  EXPECT_EQ(chat.render(context(conversation(true), "", "")), turns + "<|im_start|>assistant\n");
  EXPECT_EQ(chat.render(context(conversation(true), "", "", false)), turns);
}

}  // namespace
}  // namespace baton::testing
