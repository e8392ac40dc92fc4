// Runs a graph's nodes in order on the host, fusing adjacent pairs where one pass can do the
// work of two (TurboTransformers-style): a residual add feeding an rms_norm, and a rope of K
// feeding the KV-cache write. A fused pair writes every tensor its two nodes write, so later
// nodes and the caller see the same results; it only saves re-reading the intermediate.

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "backends/cpu/cpu_fused.h"
#include "backends/cpu/cpu_kernels.h"
#include "baton/error.h"

namespace baton::cpu {
namespace {

// The same bytes seen with the same shape, as when one node's output is the next one's input.
bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.buffer() == b.buffer() && a.offset() == b.offset() && a.shape() == b.shape();
}

enum class Fusion { kNone, kAddRmsNorm, kRopeKvWrite };

Fusion fusion_of(const Node& first, const Node& second) {
  if (first.op == OpKind::kAdd && second.op == OpKind::kRmsNorm &&
      same_tensor(second.inputs[0], first.output)) {
    return Fusion::kAddRmsNorm;
  }
  if (first.op == OpKind::kRope && second.op == OpKind::kKvWrite &&
      same_tensor(second.inputs[0], first.output) &&
      second.inputs[1].buffer() != first.output.buffer()) {
    return Fusion::kRopeKvWrite;
  }
  return Fusion::kNone;
}

void run_fused(const Context& ctx, Fusion fusion, const Node& first, const Node& second) {
  if (fusion == Fusion::kAddRmsNorm) {
    return add_rms_norm(ctx, first.inputs[0], first.inputs[1], second.inputs[1],
                        std::get<NormParams>(second.params).eps, first.output, second.output);
  }
  rope_kv_write(ctx, first.inputs[0], first.inputs[1], std::get<RopeParams>(first.params),
                first.output, second.inputs[1], second.inputs[2], second.inputs[3],
                *std::get<AttentionParams>(second.params).batch);
}

void run_node(const Context& ctx, const Node& node) {
  const std::vector<Tensor>& in = node.inputs;
  switch (node.op) {
    case OpKind::kEmbedding:
      return embedding(ctx, in[0], in[1], node.output);
    case OpKind::kMatMul:
      return matmul(ctx, in[0], in[1], node.output);
    case OpKind::kRmsNorm:
      return rms_norm(ctx, in[0], in[1], std::get<NormParams>(node.params).eps, node.output);
    case OpKind::kRope:
      return rope(ctx, in[0], in[1], std::get<RopeParams>(node.params), node.output);
    case OpKind::kKvWrite:
      return kv_write(ctx, in[0], in[1], in[2], in[3],
                      *std::get<AttentionParams>(node.params).batch);
    case OpKind::kAttention:
      return attention(ctx, in[0], in[1], in[2], std::get<AttentionParams>(node.params),
                       node.output);
    case OpKind::kSwiGlu:
      return swiglu(ctx, in[0], in[1], node.output);
    case OpKind::kGeGlu:
      return geglu(ctx, in[0], in[1], node.output);
    case OpKind::kScale:
      return scale(ctx, in[0], std::get<ScalarParams>(node.params).value, node.output);
    case OpKind::kSoftcap:
      return softcap(ctx, in[0], std::get<ScalarParams>(node.params).value, node.output);
    case OpKind::kAdd:
      return add(ctx, in[0], in[1], node.output);
    case OpKind::kSoftmax:
      return softmax(ctx, in[0], node.output);
    case OpKind::kArgmax:
      return argmax(ctx, in[0], node.output);
    case OpKind::kGetRows:
      return get_rows(ctx, in[0], in[1], node.output);
    case OpKind::kAllReduce:
      return all_reduce(in[0], *std::get<CollectiveParams>(node.params).group, node.output);
    case OpKind::kLora:
      return lora(ctx, in[0], in[1], in[2], in[3], in[4], node.output);
  }
}

// For each node, the buffers of earlier node outputs it reads last, when the graph declares its
// outputs; those and the declared outputs' buffers are kept. A buffer is only discarded after
// its last reader, so views of one buffer (reshapes) are covered by whichever is read last.
std::vector<std::vector<Buffer*>> discards_after(const Graph& graph) {
  const std::vector<Node>& nodes = graph.nodes();
  std::vector<std::vector<Buffer*>> discards(nodes.size());
  if (!graph.outputs()) return discards;
  std::unordered_set<const Buffer*> kept;
  for (const Tensor& t : *graph.outputs()) kept.insert(t.buffer().get());
  std::unordered_set<const Buffer*> produced;
  std::unordered_map<Buffer*, size_t> last_reader;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const Tensor& in : nodes[i].inputs) {
      if (in.defined() && produced.contains(in.buffer().get())) last_reader[in.buffer().get()] = i;
    }
    if (nodes[i].output.defined()) produced.insert(nodes[i].output.buffer().get());
  }
  for (const auto& [buffer, reader] : last_reader) {
    if (!kept.contains(buffer)) discards[reader].push_back(buffer);
  }
  return discards;
}

std::string describe(const Node& node) {
  return "node '" + node.name + "' (" + std::string(to_string(node.op)) + ")";
}

}  // namespace

void execute(const Context& ctx, const Graph& graph) {
  const std::vector<Node>& nodes = graph.nodes();
  const std::vector<std::vector<Buffer*>> discards = discards_after(graph);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Fusion fusion = i + 1 < nodes.size() ? fusion_of(nodes[i], nodes[i + 1]) : Fusion::kNone;
    const size_t last = fusion == Fusion::kNone ? i : i + 1;
    try {
      // Pooled buffers (outputs, and a KV cache on its first step) take their memory here,
      // before the kernels' threads touch them. Every kernel writes all of its output, so an
      // output that is its whole buffer is not zero-filled first.
      for (size_t j = i; j <= last; ++j) {
        if (const Tensor& out = nodes[j].output; out.defined()) {
          const bool whole = out.offset() == 0 && out.nbytes() == out.buffer()->size();
          whole ? out.buffer()->data_for_overwrite() : out.materialize();
        }
        for (const Tensor& in : nodes[j].inputs) {
          if (in.defined()) in.materialize();
        }
      }
      if (fusion == Fusion::kNone) {
        run_node(ctx, nodes[i]);
      } else {
        run_fused(ctx, fusion, nodes[i], nodes[i + 1]);
      }
    } catch (const Error& e) {
      std::string where = describe(nodes[i]);
      if (fusion != Fusion::kNone) where += " fused with " + describe(nodes[i + 1]);
      throw Error(e.category(), "cpu backend, " + where + ": " + e.what());
    }
    for (size_t j = i; j <= last; ++j) {
      for (Buffer* buffer : discards[j]) buffer->discard();
    }
    i = last;
  }
}

}  // namespace baton::cpu
