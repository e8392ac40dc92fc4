// Each family's published chat template (tests/data/chat_templates, as llama.cpp's tree keeps
// them) renders in Baton exactly as Python's jinja2 renders it the way transformers does
// (scripts/render_chat_templates.py wrote expected.json): a system prompt and several turns,
// no system prompt, tools, a tool call and its result.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/core/formats/chat/chat_test_util.h"

namespace baton::testing {
namespace {

const std::filesystem::path kDir =
    std::filesystem::path(BATON_SOURCE_DIR) / "tests" / "data" / "chat_templates";

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Json read_json(const std::filesystem::path& path) {
  return Json::parse(read_file(path));
}

TEST(PublishedTemplateFiles, RenderAsJinja2Does) {
  const Json cases = read_json(kDir / "cases.json");
  const Json expected = read_json(kDir / "expected.json");
  ASSERT_GE(expected.size(), 4u);
  for (const auto& [model, renders] : expected.items()) {
    const std::string source = read_file(kDir / (model + ".jinja"));
    ASSERT_FALSE(source.empty()) << model;
    for (const auto& [name, conversation] : cases.items()) {
      Json context = {{"bos_token", "<s>"}, {"eos_token", "</s>"}, {"date_string", "26 Jul 2024"}};
      context.update(conversation);
      const Json& want = renders.at(name);
      if (want.is_object()) {
        EXPECT_NE(render_error(source, context).find(want["error"].get<std::string>()),
                  std::string::npos)
            << model << " " << name;
      } else {
        EXPECT_EQ(render(source, context), want.get<std::string>()) << model << " " << name;
      }
    }
  }
}

}  // namespace
}  // namespace baton::testing
