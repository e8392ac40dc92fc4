#include "core/formats/chat/jinja_renderer.h"

#include <algorithm>
#include <cassert>

#include "baton/error.h"
#include "core/formats/chat/jinja_builtins.h"

namespace baton::jinja {

namespace {

// A macro, or the caller() of a call block. It holds its defining scope weakly: scopes own the
// values in them, macros included, and a strong reference would be a cycle. The renderer keeps
// every defining scope alive until the render ends.
class Macro : public Callable {
 public:
  Macro(Renderer& renderer, std::string name, const MacroSignature& signature, const Body& body,
        const std::shared_ptr<Scope>& closure)
      : renderer_(renderer),
        name_(std::move(name)),
        signature_(signature),
        body_(body),
        closure_(closure) {}

  Value call(const CallArgs& args) const override {
    const std::shared_ptr<Scope> closure = closure_.lock();
    assert(closure);
    return renderer_.call_macro(name_, signature_, body_, closure, args);
  }

 private:
  Renderer& renderer_;
  std::string name_;
  const MacroSignature& signature_;
  const Body& body_;
  std::weak_ptr<Scope> closure_;
};

// Lists and dicts are immutable, so only a namespace can come to contain itself, and only
// through one of its attributes. Such a cycle would recurse without end when printed and keep
// itself alive.
bool holds_a_namespace(const Value& v) {
  if (v.is_namespace()) return true;
  if (v.is_list()) return std::ranges::any_of(v.as_list(), holds_a_namespace);
  if (v.is_dict()) {
    return std::ranges::any_of(
        v.as_dict().items(), [](const Dict::Item& item) { return holds_a_namespace(item.second); });
  }
  return false;
}

}  // namespace

std::string render(const Body& body, const Dict& globals, const ChatTemplateLimits& limits) {
  return Renderer(globals, limits).render(body);
}

Renderer::Renderer(const Dict& globals, const ChatTemplateLimits& limits)
    : scope_(std::make_shared<Scope>()), limits_(limits) {
  for (const auto& [name, value] : globals.items()) scope_->vars[name] = value;
}

std::string Renderer::render(const Body& body) {
  std::string out;
  out_ = &out;
  exec(body);
  return out;
}

Value Renderer::lookup(const std::string& name) const {
  for (const Scope* s = scope_.get(); s; s = s->parent.get()) {
    const auto it = s->vars.find(name);
    if (it != s->vars.end()) return it->second;
  }
  if (const Value* builtin = builtin_globals().find(name)) return *builtin;
  return Undefined{"'" + name + "' is undefined"};
}

void Renderer::bind(const std::vector<std::string>& names, const Value& value) {
  if (names.size() == 1) {
    assign(names[0], value);
    return;
  }
  if (!value.is_list() || value.as_list().size() != names.size()) {
    throw EvalError("cannot unpack " + type_name(value) + " into " + std::to_string(names.size()) +
                    " variables");
  }
  for (size_t i = 0; i < names.size(); ++i) assign(names[i], value.as_list()[i]);
}

Renderer::Flow Renderer::exec(const Body& body) {
  for (const StmtPtr& stmt : body) {
    const Flow flow = exec(*stmt);
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

void Renderer::write(std::string_view text) {
  if (static_cast<int64_t>(out_->size() + text.size()) > limits_.max_output_bytes) {
    throw EvalError("the output grew past " + std::to_string(limits_.max_output_bytes) +
                    " bytes (the chat template output limit)");
  }
  out_->append(text);
}

void Renderer::count_step() {
  if (++steps_ > limits_.max_steps) {
    throw EvalError("the render ran past " + std::to_string(limits_.max_steps) +
                    " steps (the chat template step limit)");
  }
}

void Renderer::check_size(const Value& value) const {
  if (!value.is_string() && !value.is_list() && !value.is_dict()) return;
  const Footprint size = footprint(value, limits_.max_output_bytes);
  if (size.bytes > limits_.max_output_bytes) {
    throw EvalError("a value grew past " + std::to_string(limits_.max_output_bytes) +
                    " bytes written out (the chat template output limit)");
  }
  // Printing a value recurses once per level.
  if (size.depth > limits_.max_depth) {
    throw EvalError("a value nested deeper than " + std::to_string(limits_.max_depth) +
                    " levels (the chat template depth limit)");
  }
}

Renderer::Flow Renderer::exec(const Stmt& stmt) {
  try {
    count_step();
    switch (stmt.kind) {
      case Stmt::Kind::kText:
        write(static_cast<const TextStmt&>(stmt).text);
        break;
      case Stmt::Kind::kOutput:
        write(to_str(eval(*static_cast<const OutputStmt&>(stmt).expr)));
        break;
      case Stmt::Kind::kIf: {
        const auto& branch = static_cast<const IfStmt&>(stmt);
        for (const auto& [condition, body] : branch.branches) {
          if (truthy(eval(*condition))) return exec(body);
        }
        return exec(branch.else_body);
      }
      case Stmt::Kind::kFor:
        return exec_for(static_cast<const ForStmt&>(stmt));
      case Stmt::Kind::kSet:
        exec_set(static_cast<const SetStmt&>(stmt));
        break;
      case Stmt::Kind::kSetBlock: {
        const auto& set = static_cast<const SetBlockStmt&>(stmt);
        assign(set.target, capture(set.body));
        break;
      }
      case Stmt::Kind::kMacro: {
        const auto& macro = static_cast<const MacroStmt&>(stmt);
        define_macro(macro.name, macro.signature, macro.body);
        break;
      }
      case Stmt::Kind::kCallBlock: {
        const auto& block = static_cast<const CallBlockStmt&>(stmt);
        closures_.push_back(scope_);
        const Value caller(std::shared_ptr<const Callable>(
            std::make_shared<Macro>(*this, "caller", block.caller_signature, block.body, scope_)));
        write(to_str(eval_call(static_cast<const CallExpr&>(*block.call), &caller)));
        break;
      }
      case Stmt::Kind::kFilterBlock: {
        const auto& block = static_cast<const FilterBlockStmt&>(stmt);
        Value value = capture(block.body);
        for (const auto& filter : block.filters) {
          if (!filter->fn) throw EvalError("unknown filter '" + filter->name + "'");
          value = filter->fn(value, eval_args(filter->args));
        }
        write(to_str(value));
        break;
      }
      case Stmt::Kind::kBreak:
        return Flow::kBreak;
      case Stmt::Kind::kContinue:
        return Flow::kContinue;
      case Stmt::Kind::kBlock:
        return exec(static_cast<const BlockStmt&>(stmt).body);
    }
  } catch (const EvalError& e) {
    throw Error(ErrorCategory::kInvalidArgument,
                "chat template: error at line " + std::to_string(stmt.line) + ": " + e.what());
  }
  return Flow::kNormal;
}

Renderer::Flow Renderer::exec_for(const ForStmt& loop) {
  const List all = iterate(eval(*loop.iterable));
  const std::shared_ptr<Scope> outer = scope_;
  const auto enter = [&](const Value& item) {
    scope_ = std::make_shared<Scope>();
    scope_->parent = outer;
    bind(loop.targets, item);
  };
  // `for x in xs if cond` filters first, so loop.index and loop.length count kept items only.
  List items;
  for (const Value& item : all) {
    if (loop.filter) {
      enter(item);
      const bool keep = truthy(eval(*loop.filter));
      scope_ = outer;
      if (!keep) continue;
    }
    items.push_back(item);
  }
  if (items.empty()) {
    scope_ = std::make_shared<Scope>();
    scope_->parent = outer;
    const Flow flow = exec(loop.else_body);
    scope_ = outer;
    return flow;
  }
  const auto n = static_cast<int64_t>(items.size());
  for (int64_t i = 0; i < n; ++i) {
    // An iteration is a step even when its body is empty, so empty nested loops are bounded too.
    count_step();
    enter(items[static_cast<size_t>(i)]);
    Dict info;
    info.set("index", i + 1);
    info.set("index0", i);
    info.set("revindex", n - i);
    info.set("revindex0", n - i - 1);
    info.set("first", i == 0);
    info.set("last", i == n - 1);
    info.set("length", n);
    info.set("depth", 1);
    info.set("depth0", 0);
    if (i > 0) info.set("previtem", items[static_cast<size_t>(i - 1)]);
    if (i + 1 < n) info.set("nextitem", items[static_cast<size_t>(i + 1)]);
    assign("loop", std::move(info));
    const Flow flow = exec(loop.body);
    scope_ = outer;
    if (flow == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

void Renderer::exec_set(const SetStmt& set) {
  Value value = eval(*set.value);
  if (set.attribute.empty()) {
    bind(set.targets, value);
    return;
  }
  const Value target = lookup(set.targets[0]);
  if (!target.is_namespace()) {
    throw EvalError("cannot set attribute '" + set.attribute + "' of '" + set.targets[0] +
                    "', which is a " + type_name(target) + ", not a namespace()");
  }
  if (holds_a_namespace(value)) {
    throw EvalError("cannot set attribute '" + set.attribute + "' of '" + set.targets[0] +
                    "' to a value holding a namespace(): namespaces do not nest here");
  }
  target.as_namespace().attributes.set(set.attribute, std::move(value));
}

std::string Renderer::capture(const Body& body) {
  std::string buffer;
  std::string* const saved = out_;
  out_ = &buffer;
  exec(body);
  out_ = saved;
  return buffer;
}

void Renderer::define_macro(const std::string& name, const MacroSignature& signature,
                            const Body& body) {
  closures_.push_back(scope_);
  assign(name, Value(std::shared_ptr<const Callable>(
                   std::make_shared<Macro>(*this, name, signature, body, scope_))));
}

Value Renderer::call_macro(const std::string& name, const MacroSignature& signature,
                           const Body& body, const std::shared_ptr<Scope>& closure,
                           const CallArgs& args) {
  const auto& params = signature.params;
  if (args.positional.size() > params.size()) {
    throw EvalError("macro '" + name + "' takes not more than " + std::to_string(params.size()) +
                    " argument(s)");
  }
  if (call_depth_ >= limits_.max_depth) {
    throw EvalError("macro calls nested deeper than " + std::to_string(limits_.max_depth) +
                    " (the chat template depth limit)");
  }
  const std::shared_ptr<Scope> saved = scope_;
  scope_ = std::make_shared<Scope>();
  scope_->parent = closure;
  std::vector<bool> given(params.size(), false);
  for (size_t i = 0; i < args.positional.size(); ++i) {
    assign(params[i], args.positional[i]);
    given[i] = true;
  }
  for (const auto& [key, value] : args.keyword) {
    const auto it = std::find(params.begin(), params.end(), key);
    if (it == params.end() && key != "caller") {
      throw EvalError("macro '" + name + "' got an unexpected keyword argument '" + key + "'");
    }
    if (it != params.end()) given[static_cast<size_t>(it - params.begin())] = true;
    assign(key, value);
  }
  // Defaults are evaluated in the macro's scope, so they may use earlier parameters.
  for (size_t i = 0; i < params.size(); ++i) {
    if (given[i]) continue;
    assign(params[i], signature.defaults[i]
                          ? eval(*signature.defaults[i])
                          : Value(Undefined{"parameter '" + params[i] + "' was not provided"}));
  }
  ++call_depth_;
  std::string out = capture(body);
  --call_depth_;
  scope_ = saved;
  return out;
}

}  // namespace baton::jinja
