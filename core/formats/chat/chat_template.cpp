#include "core/formats/chat/chat_template.h"

#include "baton/error.h"
#include "core/formats/chat/jinja_parser.h"
#include "core/formats/chat/jinja_renderer.h"

namespace baton {

struct ChatTemplate::Parsed {
  jinja::Body body;
  ChatTemplateLimits limits;
};

namespace {

template <typename Json>
std::string render_json(const jinja::Body& body, const ChatTemplateLimits& limits,
                        const Json& context) {
  if (!context.is_object()) {
    throw Error(
        ErrorCategory::kInvalidArgument,
        std::string("chat template context must be a JSON object, got ") + context.type_name());
  }
  jinja::Value globals;
  try {
    globals = jinja::from_json(context);
  } catch (const jinja::EvalError& e) {
    throw Error(ErrorCategory::kInvalidArgument, std::string("chat template context: ") + e.what());
  }
  return jinja::render(body, globals.as_dict(), limits);
}

}  // namespace

ChatTemplate::ChatTemplate(std::string_view source, const ChatTemplateLimits& limits)
    : parsed_(std::make_unique<Parsed>(Parsed{jinja::parse(source, limits.max_depth), limits})) {}

ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

std::string ChatTemplate::render(const nlohmann::json& context) const {
  return render_json(parsed_->body, parsed_->limits, context);
}

std::string ChatTemplate::render_ordered(const nlohmann::ordered_json& context) const {
  return render_json(parsed_->body, parsed_->limits, context);
}

std::string_view default_chat_template() {
  return "{% for message in messages %}"
         "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
         "{% endfor %}"
         "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
}

}  // namespace baton
