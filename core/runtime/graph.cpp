#include "core/runtime/graph.h"

#include <cmath>
#include <string>
#include <type_traits>

#include "baton/error.h"

namespace baton {

bool matches_schema(const Node& node) {
  return node.inputs.size() == static_cast<size_t>(op_schema(node.op).inputs) &&
         has_op_params(node.op, node.params);
}

void check_node_schema(const Node& node) {
  const OpSchema& schema = op_schema(node.op);
  if (node.inputs.size() != static_cast<size_t>(schema.inputs)) {
    throw Error(ErrorCategory::kInvalidArgument, "expects " + std::to_string(schema.inputs) +
                                                     " inputs, got " +
                                                     std::to_string(node.inputs.size()));
  }
  if (!has_op_params(node.op, node.params)) {
    throw Error(ErrorCategory::kInvalidArgument, "parameters of the wrong kind");
  }
}
namespace {

// Graphs are built anew for every step, so a message is only written when the check fails.
void require(bool ok, const std::string& node, const char* what) {
  if (!ok) throw Error(ErrorCategory::kInvalidArgument, node + ": " + what);
}

template <class Message>
requires std::is_invocable_r_v<std::string, Message>
void require(bool ok, const std::string& node, Message what) {
  if (!ok) throw Error(ErrorCategory::kInvalidArgument, node + ": " + what());
}

std::string shape_of(const Tensor& t) {
  return to_string(t.shape());
}

}  // namespace

std::vector<Tensor> Graph::copied(Inputs inputs) {
  std::vector<Tensor> tensors;
  tensors.reserve(inputs.size());
  for (const Tensor& t : inputs) tensors.push_back(t);
  return tensors;
}

Tensor Graph::append(OpKind op, Inputs inputs, DType out_dtype, Shape out_shape, OpParams params,
                     std::string name) {
  Tensor out = allocate_(out_dtype, std::move(out_shape));
  nodes_.push_back(Node{op, copied(inputs), out, std::move(params), std::move(name)});
  return out;
}

Tensor Graph::embedding(const Tensor& table, const Tensor& ids, std::string name) {
  require(table.rank() == 2, name,
          [&] { return "table must be [vocab, dim], got " + shape_of(table); });
  require(ids.rank() == 1 && ids.dtype() == DType::kI32, name, "ids must be a 1-D i32 tensor");
  return append(OpKind::kEmbedding, {table, ids}, DType::kF32, {ids.dim(0), table.dim(1)}, {},
                std::move(name));
}

Tensor Graph::matmul(const Tensor& x, const Tensor& w, std::string name) {
  require(x.rank() == 2 && x.dtype() == DType::kF32, name,
          [&] { return "x must be [n, k] f32, got " + shape_of(x); });
  require(w.rank() == 2 && w.dim(1) == x.dim(1), name,
          [&] { return "weight " + shape_of(w) + " does not match x " + shape_of(x); });
  return append(OpKind::kMatMul, {x, w}, DType::kF32, {x.dim(0), w.dim(0)}, {}, std::move(name));
}

Tensor Graph::rms_norm(const Tensor& x, const Tensor& weight, float eps, std::string name) {
  require(weight.rank() == 1 && weight.dim(0) == x.row_length(), name,
          [&] { return "weight " + shape_of(weight) + " does not match rows of " + shape_of(x); });
  return append(OpKind::kRmsNorm, {x, weight}, DType::kF32, x.shape(), NormParams{eps},
                std::move(name));
}

Tensor Graph::rope(const Tensor& x, const Tensor& positions, RopeParams params, std::string name) {
  require(x.rank() == 3, name,
          [&] { return "x must be [n, heads, head_dim], got " + shape_of(x); });
  require(positions.rank() == 1 && positions.dim(0) == x.dim(0) && positions.dtype() == DType::kI32,
          name, [&] { return "positions must be [n] i32 with n = " + std::to_string(x.dim(0)); });
  require(params.n_rot > 0 && params.n_rot % 2 == 0 && params.n_rot <= x.dim(2), name, [&] {
    return "n_rot " + std::to_string(params.n_rot) + " must be even and at most head_dim " +
           std::to_string(x.dim(2));
  });
  require(params.freq_factors.empty() ||
              params.freq_factors.size() == static_cast<size_t>(params.n_rot / 2),
          name, "freq_factors must hold n_rot/2 values");
  return append(OpKind::kRope, {x, positions}, DType::kF32, x.shape(), std::move(params),
                std::move(name));
}

void Graph::kv_write(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                     std::shared_ptr<const PagedBatch> batch, std::string name) {
  require(k.rank() == 3 && k.shape() == v.shape(), name,
          "k and v must be equal [n, kv_heads, head_dim]");
  require(k_cache.rank() == 4 && k_cache.shape() == v_cache.shape() && k_cache.dim(2) == k.dim(1) &&
              k_cache.dim(3) == k.dim(2),
          name, [&] { return "caches " + shape_of(k_cache) + " do not match k " + shape_of(k); });
  require(batch && batch->token_pos.size() == static_cast<size_t>(k.dim(0)), name,
          "batch layout must describe every token");
  AttentionParams params;
  params.batch = std::move(batch);
  nodes_.push_back(Node{OpKind::kKvWrite, copied({k, v, k_cache, v_cache}), Tensor(),
                        std::move(params), std::move(name)});
}

Tensor Graph::attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                        AttentionParams params, std::string name) {
  require(q.rank() == 3, name,
          [&] { return "q must be [n, heads, head_dim], got " + shape_of(q); });
  require(k_cache.rank() == 4 && k_cache.shape() == v_cache.shape() && k_cache.dim(3) == q.dim(2),
          name, [&] { return "caches " + shape_of(k_cache) + " do not match q " + shape_of(q); });
  require(q.dim(1) % k_cache.dim(2) == 0, name, [&] {
    return "query heads " + std::to_string(q.dim(1)) + " are not a multiple of kv heads " +
           std::to_string(k_cache.dim(2));
  });
  require(params.batch && params.batch->token_pos.size() == static_cast<size_t>(q.dim(0)), name,
          "batch layout must describe every token");
  require(params.softcap >= 0.0f && std::isfinite(params.softcap), name, [&] {
    return "softcap " + std::to_string(params.softcap) + " must be finite and not negative";
  });
  require(params.window >= 0, name,
          [&] { return "window " + std::to_string(params.window) + " must not be negative"; });
  return append(OpKind::kAttention, {q, k_cache, v_cache}, DType::kF32, q.shape(),
                std::move(params), std::move(name));
}

Tensor Graph::swiglu(const Tensor& gate, const Tensor& up, std::string name) {
  require(gate.shape() == up.shape(), name,
          [&] { return "gate " + shape_of(gate) + " != up " + shape_of(up); });
  return append(OpKind::kSwiGlu, {gate, up}, DType::kF32, gate.shape(), {}, std::move(name));
}

Tensor Graph::geglu(const Tensor& gate, const Tensor& up, std::string name) {
  require(gate.shape() == up.shape(), name,
          [&] { return "gate " + shape_of(gate) + " != up " + shape_of(up); });
  return append(OpKind::kGeGlu, {gate, up}, DType::kF32, gate.shape(), {}, std::move(name));
}

Tensor Graph::scale(const Tensor& x, float factor, std::string name) {
  require(std::isfinite(factor), name,
          [&] { return "factor " + std::to_string(factor) + " is not finite"; });
  return append(OpKind::kScale, {x}, DType::kF32, x.shape(), ScalarParams{factor}, std::move(name));
}

Tensor Graph::softcap(const Tensor& x, float cap, std::string name) {
  require(std::isfinite(cap) && cap > 0.0f, name,
          [&] { return "cap " + std::to_string(cap) + " must be positive and finite"; });
  return append(OpKind::kSoftcap, {x}, DType::kF32, x.shape(), ScalarParams{cap}, std::move(name));
}

Tensor Graph::add(const Tensor& a, const Tensor& b, std::string name) {
  require(a.shape() == b.shape() || (b.rank() == 1 && b.dim(0) == a.row_length()), name,
          [&] { return "cannot add " + shape_of(b) + " to " + shape_of(a); });
  return append(OpKind::kAdd, {a, b}, DType::kF32, a.shape(), {}, std::move(name));
}

Tensor Graph::softmax(const Tensor& x, std::string name) {
  return append(OpKind::kSoftmax, {x}, DType::kF32, x.shape(), {}, std::move(name));
}

Tensor Graph::argmax(const Tensor& x, std::string name) {
  return append(OpKind::kArgmax, {x}, DType::kI32, {x.rows()}, {}, std::move(name));
}

Tensor Graph::get_rows(const Tensor& x, const Tensor& rows, std::string name) {
  require(x.rank() == 2, name, [&] { return "x must be [n, d], got " + shape_of(x); });
  require(rows.rank() == 1 && rows.dtype() == DType::kI32, name, "rows must be a 1-D i32 tensor");
  return append(OpKind::kGetRows, {x, rows}, DType::kF32, {rows.dim(0), x.dim(1)}, {},
                std::move(name));
}

Tensor Graph::all_reduce(const Tensor& x, Communicator& group, std::string name) {
  require(x.dtype() == DType::kF32, name, "x must be f32");
  return append(OpKind::kAllReduce, {x}, DType::kF32, x.shape(), CollectiveParams{&group},
                std::move(name));
}

Tensor Graph::lora(const Tensor& y, const Tensor& x, const Tensor& a, const Tensor& bt,
                   const Tensor& slots, std::string name) {
  require(x.rank() == 2 && x.dtype() == DType::kF32, name,
          [&] { return "x must be [n, k] f32, got " + shape_of(x); });
  require(y.rank() == 2 && y.dtype() == DType::kF32 && y.dim(0) == x.dim(0), name,
          [&] { return "y must be [n, m] f32 with x's rows, got " + shape_of(y); });
  require(a.rank() == 3 && is_lora_slot_dtype(a.dtype()) && a.dim(2) == x.dim(1), name, [&] {
    return "a must be [slots, r, k] f32 or f16 for x " + shape_of(x) + ", got " + shape_of(a);
  });
  require(bt.rank() == 3 && bt.dtype() == a.dtype() && bt.dim(0) == a.dim(0) &&
              bt.dim(1) == a.dim(1) && bt.dim(2) == y.dim(1),
          name, [&] {
            return "bt must be [slots, r, m] of a's type for a " + shape_of(a) + " and y " +
                   shape_of(y) + ", got " + shape_of(bt);
          });
  require(slots.rank() == 1 && slots.dtype() == DType::kI32 && slots.dim(0) == x.dim(0), name,
          [&] { return "slots must be [n] i32, got " + shape_of(slots); });
  return append(OpKind::kLora, {y, x, a, bt, slots}, DType::kF32, y.shape(), {}, std::move(name));
}

}  // namespace baton
