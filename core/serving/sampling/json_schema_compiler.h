#pragma once

// The compiler behind json_schema_to_gbnf (json_schema_grammar.h), internal to it:
// json_schema_compiler.cpp walks the schema, its references and combinators;
// json_schema_types.cpp writes the values of each type.

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton::detail {

// Schemas keep their properties in the order written: generation follows it.
using Json = nlohmann::ordered_json;

// Values end where their last character is, so that the root's grammar finishes with the value
// and generation stops there. Whitespace is one optional space inside brackets and around
// separators: compact JSON, as OpenAI's structured outputs write it, since small models given
// more freedom spend their tokens on blank lines. JSON allows any \u escape but a lone
// surrogate half, which strict parsers refuse.
inline constexpr std::string_view kJsonRules = R"(ws ::= " "?
json-value ::= json-object | json-array | json-string | json-number | json-boolean | json-null
json-object ::= "{" ws ( json-member ( ws "," ws json-member )* ws )? "}"
json-member ::= json-string ws ":" ws json-value
json-array ::= "[" ws ( json-value ( ws "," ws json-value )* ws )? "]"
json-string ::= "\"" json-char* "\""
json-char ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" json-hex-code )
json-hex-code ::= [0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2}
json-int-part ::= "0" | [1-9] [0-9]{0,15}
json-integer ::= "-"? json-int-part
json-number ::= "-"? json-int-part ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?
json-boolean ::= "true" | "false"
json-null ::= "null"
)";

class SchemaCompiler {
 public:
  explicit SchemaCompiler(const Json& root) : root_(root) {}

  std::string compile();

 private:
  [[noreturn]] void fail(const std::string& pointer, const std::string& what) const;

  // A rule with `body`, named after `hint`; rules with the same body are one rule.
  std::string rule(const std::string& hint, const std::string& body);
  void define(const std::string& name, const std::string& body);
  static std::string name_part(const std::string& key);

  std::string expression(const Json& schema, const std::string& pointer, const std::string& hint,
                         int depth);
  std::string reference(const Json& ref, const std::string& pointer, int depth);
  // const or enum: exactly the values given, of those `type` allows when it is beside them.
  std::string enumeration(const Json& schema, const std::string& pointer, const std::string& hint,
                          const std::vector<std::string>& constraints);
  static bool has_type(const Json& value, const std::string& type);
  std::string alternatives(const Json& schemas, const std::string& pointer, const std::string& hint,
                           int depth);
  // allOf of object schemas: one object with the properties and requirements of all.
  std::string all_of(const Json& schema, const std::string& pointer, const std::string& hint,
                     int depth);
  std::string typed(const Json& schema, const std::string& pointer, const std::string& hint,
                    int depth);
  // The type a schema without "type" constrains by its keywords; "" for any value.
  std::string implied_type(const Json& schema, const std::string& pointer) const;

  int64_t count(const Json& schema, const char* keyword, const std::string& pointer,
                int64_t fallback) const;
  // "{min,max}" for a repetition; max < 0: unbounded.
  static std::string repetition(int64_t min, int64_t max);
  std::string string_expression(const Json& schema, const std::string& pointer,
                                const std::string& hint);
  void add_format(const std::string& name);
  // The inclusive bounds a number or integer schema sets, as whole numbers: `integral` rounds
  // fractional bounds inwards; otherwise they must be whole.
  std::pair<std::optional<int64_t>, std::optional<int64_t>> bounds(const Json& schema,
                                                                   const std::string& pointer,
                                                                   bool integral) const;
  static std::string integer_range(std::optional<int64_t> low, std::optional<int64_t> high);
  std::string integer_expression(const Json& schema, const std::string& pointer,
                                 const std::string& hint);
  std::string number_expression(const Json& schema, const std::string& pointer,
                                const std::string& hint);
  std::string object_expression(const Json& schema, const std::string& pointer,
                                const std::string& hint, int depth);
  std::string array_expression(const Json& schema, const std::string& pointer,
                               const std::string& hint, int depth);

  const Json& root_;
  std::vector<std::pair<std::string, std::string>> rules_;
  std::set<std::string> names_ = {"root", "ws"};
  std::map<std::string, std::string> by_body_;
  std::map<std::string, std::string> refs_;
  size_t visits_ = 0;
};

}  // namespace baton::detail
