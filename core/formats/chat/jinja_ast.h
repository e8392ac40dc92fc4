#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/formats/chat/jinja_value.h"

// The parsed form of a template: statements holding expressions. Each node records the line it
// starts on, for error messages. The tree is immutable once parsed, so renders may share it.
namespace baton::jinja {

// A filter (`x | name(args)`) or test (`x is name(args)`) implementation.
using FilterFn = Value (*)(const Value& input, const CallArgs& args);
using TestFn = bool (*)(const Value& input, const CallArgs& args);

struct Expr {
  enum class Kind {
    kLiteral,
    kName,
    kList,
    kDict,
    kGetAttr,
    kGetItem,
    kSlice,
    kCall,
    kFilter,
    kTest,
    kUnary,
    kBinary,
    kCompare,
    kCondition,
  };
  Expr(Kind k, int l) : kind(k), line(l) {}
  virtual ~Expr() = default;
  Kind kind;
  int line;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Arguments {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};

struct LiteralExpr : Expr {
  explicit LiteralExpr(int l) : Expr(Kind::kLiteral, l) {}
  Value value;
};
struct NameExpr : Expr {
  explicit NameExpr(int l) : Expr(Kind::kName, l) {}
  std::string name;
};
struct ListExpr : Expr {  // list and tuple literals
  explicit ListExpr(int l) : Expr(Kind::kList, l) {}
  std::vector<ExprPtr> items;
  bool tuple = false;
};
struct DictExpr : Expr {
  explicit DictExpr(int l) : Expr(Kind::kDict, l) {}
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
};
struct GetAttrExpr : Expr {  // object.name
  explicit GetAttrExpr(int l) : Expr(Kind::kGetAttr, l) {}
  ExprPtr object;
  std::string name;
};
struct GetItemExpr : Expr {  // object[index]
  explicit GetItemExpr(int l) : Expr(Kind::kGetItem, l) {}
  ExprPtr object;
  ExprPtr index;
};
struct SliceExpr : Expr {  // object[start:stop:step], any part may be absent
  explicit SliceExpr(int l) : Expr(Kind::kSlice, l) {}
  ExprPtr object;
  ExprPtr start;
  ExprPtr stop;
  ExprPtr step;
};
struct CallExpr : Expr {
  explicit CallExpr(int l) : Expr(Kind::kCall, l) {}
  ExprPtr callee;
  Arguments args;
};
struct FilterExpr : Expr {
  explicit FilterExpr(int l) : Expr(Kind::kFilter, l) {}
  ExprPtr input;
  std::string name;
  FilterFn fn = nullptr;  // null: no such filter, reported when evaluated
  Arguments args;
};
struct TestExpr : Expr {
  explicit TestExpr(int l) : Expr(Kind::kTest, l) {}
  ExprPtr input;
  std::string name;
  TestFn fn = nullptr;  // null: no such test, reported when evaluated
  Arguments args;
  bool negated = false;
};

enum class UnaryOp { kNot, kNeg, kPos };
struct UnaryExpr : Expr {
  explicit UnaryExpr(int l) : Expr(Kind::kUnary, l) {}
  UnaryOp op = UnaryOp::kNot;
  ExprPtr operand;
};

enum class BinaryOp {
  kAnd,
  kOr,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kConcat,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,
  kNotIn,
};
struct BinaryExpr : Expr {
  explicit BinaryExpr(int l) : Expr(Kind::kBinary, l) {}
  BinaryOp op = BinaryOp::kAdd;
  ExprPtr left;
  ExprPtr right;
};
struct CompareExpr
    : Expr {  // a chain such as `a < b <= c`: each operator applies to its neighbours
  explicit CompareExpr(int l) : Expr(Kind::kCompare, l) {}
  ExprPtr first;
  std::vector<std::pair<BinaryOp, ExprPtr>> rest;
};
struct ConditionExpr : Expr {  // then_expr if condition else else_expr
  explicit ConditionExpr(int l) : Expr(Kind::kCondition, l) {}
  ExprPtr condition;
  ExprPtr then_expr;
  ExprPtr else_expr;  // null: Undefined when the condition is false
};

struct Stmt {
  enum class Kind {
    kText,
    kOutput,
    kIf,
    kFor,
    kSet,
    kSetBlock,
    kMacro,
    kCallBlock,
    kFilterBlock,
    kBreak,
    kContinue,
    kBlock,
  };
  Stmt(Kind k, int l) : kind(k), line(l) {}
  virtual ~Stmt() = default;
  Kind kind;
  int line;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct TextStmt : Stmt {
  explicit TextStmt(int l) : Stmt(Kind::kText, l) {}
  std::string text;
};
struct OutputStmt : Stmt {  // {{ expr }}
  explicit OutputStmt(int l) : Stmt(Kind::kOutput, l) {}
  ExprPtr expr;
};
struct IfStmt : Stmt {
  explicit IfStmt(int l) : Stmt(Kind::kIf, l) {}
  std::vector<std::pair<ExprPtr, Body>> branches;  // if, then each elif
  Body else_body;
};
struct ForStmt : Stmt {
  explicit ForStmt(int l) : Stmt(Kind::kFor, l) {}
  std::vector<std::string> targets;  // more than one: each item is unpacked
  ExprPtr iterable;
  ExprPtr filter;  // `for x in xs if cond`; may be null
  Body body;
  Body else_body;  // rendered when no item passed the filter
};
struct SetStmt : Stmt {  // {% set a = v %}, {% set a, b = v %}, {% set ns.attr = v %}
  explicit SetStmt(int l) : Stmt(Kind::kSet, l) {}
  std::vector<std::string> targets;
  std::string attribute;  // non-empty: set this attribute of the namespace targets[0]
  ExprPtr value;
};
struct SetBlockStmt : Stmt {  // {% set name %}body{% endset %}
  explicit SetBlockStmt(int l) : Stmt(Kind::kSetBlock, l) {}
  std::string target;
  Body body;
};

struct MacroSignature {
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // one per parameter; null where it has none
};
struct MacroStmt : Stmt {
  explicit MacroStmt(int l) : Stmt(Kind::kMacro, l) {}
  std::string name;
  MacroSignature signature;
  Body body;
};
struct CallBlockStmt : Stmt {  // {% call(params) macro(args) %}body{% endcall %}
  explicit CallBlockStmt(int l) : Stmt(Kind::kCallBlock, l) {}
  ExprPtr call;  // a CallExpr
  MacroSignature caller_signature;
  Body body;  // what caller() renders
};
struct FilterBlockStmt : Stmt {  // {% filter upper | trim %}body{% endfilter %}
  explicit FilterBlockStmt(int l) : Stmt(Kind::kFilterBlock, l) {}
  std::vector<std::unique_ptr<FilterExpr>> filters;  // applied in order; their inputs are null
  Body body;
};
struct BlockStmt : Stmt {  // {% generation %}body{% endgeneration %}: renders its body
  explicit BlockStmt(int l) : Stmt(Kind::kBlock, l) {}
  Body body;
};

}  // namespace baton::jinja
