#include "tools/plan/capacity_plan.h"

#include <algorithm>

#include "baton/error.h"

namespace baton {
namespace {

constexpr int32_t kMaxDevices = 64;

double flops_for(const Device& device, DType weight_type) {
  const auto found = device.flops_by_weight_type.find(weight_type);
  return found != device.flops_by_weight_type.end() ? found->second
                                                    : device.spec.fp16_tflops * 1e12;
}

// Tensor parallelism splits heads: the largest power of two dividing the KV heads, at most
// `devices`; pipeline stages take the rest.
std::pair<int32_t, int32_t> split(const ModelConfig& config, int32_t devices) {
  int32_t tp = 1;
  while (tp * 2 <= devices && config.n_head_kv % (tp * 2) == 0 && devices % (tp * 2) == 0) tp *= 2;
  return {tp, devices / tp};
}

}  // namespace

uint64_t kv_bytes_per_token(const ModelFootprint& model, DType dtype) {
  for (const KvChoice& kv : model.kv) {
    if (kv.dtype == dtype) return kv.bytes_per_token;
  }
  throw Error(ErrorCategory::kInvalidArgument,
              "the KV cache type " + std::string(to_string(dtype)) + " does not fit head size " +
                  std::to_string(model.config.head_dim));
}

namespace {

PlanRow estimate(const ModelFootprint& model, const Device& device, const WeightChoice& weights,
                 const PlanTarget& target, int32_t count, double kv_bytes) {
  const auto [tp, pp] = split(model.config, count);
  PlanRow row{.device = device.spec.name,
              .weights = weights.name,
              .devices = count,
              .tensor_parallel = tp,
              .pipeline_parallel = pp,
              .weight_gb = static_cast<double>(weights.bytes) / 1e9,
              .kv_gb = kv_bytes / 1e9};
  // Per step: tensor parallel ranks read and compute their share at once; pipeline stages one
  // after another, so they add no speed to one step. A step reads every sequence's K and V so
  // far: half the context on average.
  const double flops = flops_for(device, weights.type) * tp;
  const double step_flops =
      2.0 * static_cast<double>(model.prefill_params) * static_cast<double>(target.concurrency);
  const double compute_s = step_flops / flops;
  if (device.spec.bandwidth_gbps > 0) {
    const double read_s = (static_cast<double>(weights.decode_bytes) + kv_bytes / 2.0) /
                          (device.spec.bandwidth_gbps * 1e9 * tp);
    row.bandwidth_bound = read_s >= compute_s;
    row.tpot_ms = 1e3 * std::max(read_s, compute_s);
  }
  row.prefill_tokens_per_s = flops / (2.0 * static_cast<double>(model.prefill_params));
  row.ttft_ms = 1e3 * target.prompt_tokens / row.prefill_tokens_per_s;
  row.meets_target =
      target.target_tpot_ms <= 0 || (row.tpot_ms > 0 && row.tpot_ms <= target.target_tpot_ms);
  return row;
}

}  // namespace

std::vector<PlanRow> plan_capacity(const ModelFootprint& model, const std::vector<Device>& devices,
                                   const PlanTarget& target) {
  const double kv_bytes = static_cast<double>(kv_bytes_per_token(model, target.kv_dtype)) *
                          static_cast<double>(target.context) *
                          static_cast<double>(target.concurrency);
  std::vector<PlanRow> rows;
  for (const Device& device : devices) {
    const double usable = device.spec.memory_gib * 1073741824.0 * device.usable_memory_fraction;
    for (const WeightChoice& weights : model.weights) {
      const double needed = static_cast<double>(weights.bytes) + kv_bytes;
      int32_t count = 1;
      while (count <= kMaxDevices && needed / count > usable) count *= 2;
      if (count > kMaxDevices) continue;
      PlanRow row = estimate(model, device, weights, target, count, kv_bytes);
      // Short of the latency target, more devices help while tensor parallelism can grow.
      while (!row.meets_target && row.tpot_ms > 0 && count * 2 <= kMaxDevices &&
             split(model.config, count * 2).first > row.tensor_parallel) {
        count *= 2;
        row = estimate(model, device, weights, target, count, kv_bytes);
      }
      rows.push_back(row);
    }
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const PlanRow& a, const PlanRow& b) { return a.devices < b.devices; });
  return rows;
}

}  // namespace baton
