#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "core/runtime/op.h"
#include "core/runtime/tensor.h"

namespace baton {

// One operation of a step: reads `inputs`, writes `output` (kKvWrite writes its cache inputs
// in place and has no output).
struct Node {
  OpKind op;
  std::vector<Tensor> inputs;
  Tensor output;
  OpParams params;
  std::string name;  // for error messages and per-node comparison in tests
};

// Whether `node` has the inputs and parameter type of its op's row in the op table.
bool matches_schema(const Node& node);
// Throws Error(kInvalidArgument) saying what differs unless matches_schema(node).
void check_node_schema(const Node& node);

// Allocates a node's output on the device that will execute the graph.
using TensorAllocator = std::function<Tensor(DType, Shape)>;

// The device-agnostic computation of one model step, built fresh for each batch. Builder
// methods check shapes, allocate the output and append a node; a backend then runs the nodes
// in order.
// The element types LoRA slots may hold (Graph::lora's a and bt): f32, and f16, which halves
// the bytes a step reads for them.
inline bool is_lora_slot_dtype(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16;
}

class Graph {
 public:
  explicit Graph(TensorAllocator allocate) : allocate_(std::move(allocate)) {}

  Tensor embedding(const Tensor& table, const Tensor& ids, std::string name = "embedding");
  Tensor matmul(const Tensor& x, const Tensor& w, std::string name = "matmul");
  Tensor rms_norm(const Tensor& x, const Tensor& weight, float eps, std::string name = "rms_norm");
  Tensor rope(const Tensor& x, const Tensor& positions, RopeParams params,
              std::string name = "rope");
  void kv_write(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                std::shared_ptr<const PagedBatch> batch, std::string name = "kv_write");
  Tensor attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                   AttentionParams params, std::string name = "attention");
  Tensor swiglu(const Tensor& gate, const Tensor& up, std::string name = "swiglu");
  Tensor geglu(const Tensor& gate, const Tensor& up, std::string name = "geglu");
  Tensor scale(const Tensor& x, float factor, std::string name = "scale");
  Tensor softcap(const Tensor& x, float cap, std::string name = "softcap");
  Tensor add(const Tensor& a, const Tensor& b, std::string name = "add");
  Tensor softmax(const Tensor& x, std::string name = "softmax");
  Tensor argmax(const Tensor& x, std::string name = "argmax");
  Tensor get_rows(const Tensor& x, const Tensor& rows, std::string name = "get_rows");
  Tensor all_reduce(const Tensor& x, Communicator& group, std::string name = "all_reduce");
  // y plus each token's LoRA update from the adapter in its slot (OpKind::kLora); a and bt hold
  // one element type of is_lora_slot_dtype.
  Tensor lora(const Tensor& y, const Tensor& x, const Tensor& a, const Tensor& bt,
              const Tensor& slots, std::string name = "lora");

  const std::vector<Node>& nodes() const { return nodes_; }

  // Declares the tensors the caller reads after execution. Once declared, a backend may reuse
  // the memory of every other node output after its last reader, so a step holds a few
  // activations at a time; undeclared, every output stays readable (tests compare node by node).
  void set_outputs(std::vector<Tensor> outputs) { outputs_ = std::move(outputs); }
  const std::optional<std::vector<Tensor>>& outputs() const { return outputs_; }

 private:
  // Inputs by reference: a braced list of Tensors would be copied twice (into the list, then out
  // of it), and every copy of a Tensor allocates its shape; graphs are built for every step.
  using Inputs = std::initializer_list<std::reference_wrapper<const Tensor>>;
  static std::vector<Tensor> copied(Inputs inputs);
  Tensor append(OpKind op, Inputs inputs, DType out_dtype, Shape out_shape, OpParams params,
                std::string name);

  TensorAllocator allocate_;
  std::vector<Node> nodes_;
  std::optional<std::vector<Tensor>> outputs_;
};

}  // namespace baton
