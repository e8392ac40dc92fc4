#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "baton/chat_template_limits.h"
#include "core/formats/chat/jinja_ast.h"
#include "core/formats/chat/jinja_value.h"

namespace baton::jinja {

// Renders a parsed template with `globals` as its variables. Runtime errors throw
// baton::Error(kInvalidArgument) naming the template line; raise_exception's message passes
// through as "chat template: <message>", and so does a render past one of `limits`.
std::string render(const Body& body, const Dict& globals, const ChatTemplateLimits& limits);

// Variables of one level of the template. As in Jinja, each for-loop iteration and each macro
// call has its own (so `set` inside a loop body is not seen after it, which is why templates use
// namespace()); if-blocks do not.
struct Scope {
  std::shared_ptr<Scope> parent;
  std::unordered_map<std::string, Value> vars;
};

// One render: the scope chain, the output being written, the macro call depth and the steps run
// so far. Statements run in jinja_renderer.cpp, expressions are evaluated in jinja_eval.cpp.
class Renderer {
 public:
  Renderer(const Dict& globals, const ChatTemplateLimits& limits);
  std::string render(const Body& body);

  // Evaluates an expression; an EvalError inside becomes a baton::Error naming expr's line.
  Value eval(const Expr& expr);

  // Runs a macro body in a new scope under `closure` with the call's arguments bound to the
  // signature; returns what it printed.
  Value call_macro(const std::string& name, const MacroSignature& signature, const Body& body,
                   const std::shared_ptr<Scope>& closure, const CallArgs& args);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Flow exec(const Body& body);
  Flow exec(const Stmt& stmt);
  Flow exec_for(const ForStmt& loop);
  void exec_set(const SetStmt& set);
  std::string capture(const Body& body);
  void define_macro(const std::string& name, const MacroSignature& signature, const Body& body);
  // Appends to the output being written, within max_output_bytes.
  void write(std::string_view text);
  // Counts one statement or expression against max_steps.
  void count_step();
  // A value that would write out more than max_output_bytes, or nests deeper than max_depth, is
  // refused as soon as it is built.
  void check_size(const Value& value) const;

  Value lookup(const std::string& name) const;
  void assign(const std::string& name, Value value) { scope_->vars[name] = std::move(value); }
  // Binds names to value, unpacking it when there is more than one name.
  void bind(const std::vector<std::string>& names, const Value& value);

  Value eval_node(const Expr& expr);
  Value eval_call(const CallExpr& call, const Value* caller);
  CallArgs eval_args(const Arguments& args);

  std::shared_ptr<Scope> scope_;
  // Scopes macros were defined in: a macro may be called after the loop iteration that defined
  // it ended (stored in a namespace), as Jinja allows.
  std::vector<std::shared_ptr<Scope>> closures_;
  std::string* out_ = nullptr;
  int call_depth_ = 0;
  ChatTemplateLimits limits_;
  int64_t steps_ = 0;
};

}  // namespace baton::jinja
