#pragma once

// Roofline estimates of whether a device (and how many of them) serves a model at a context,
// concurrency and latency target: memory from the model's exact footprint, decode from the
// bytes a step reads over the memory bandwidth (or its work over the compute peak, whichever
// is slower), prefill from its work over the compute peak. Estimates, not measurements: real
// kernels reach a fraction of either roof (docs/scheduling.md compares them with `baton bench`).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/plan/hardware_specs.h"
#include "tools/plan/model_footprint.h"

namespace baton {

struct PlanTarget {
  int32_t context = 4096;       // tokens per sequence (prompt and output)
  int32_t concurrency = 1;      // sequences decoding together
  int32_t prompt_tokens = 512;  // of one request, for the prefill estimate
  double target_tpot_ms = 0;    // 0: no target
  DType kv_dtype = DType::kF16;
};

// A device as the estimate sees it: the published spec, or this host as measured, whose
// compute peak depends on the weight type (the CPU's matmul kernels differ per type).
struct Device {
  HardwareSpec spec;
  std::map<DType, double> flops_by_weight_type;  // FLOP/s; empty: spec.fp16_tflops for all
  double usable_memory_fraction = 0.9;           // the rest for activations and the runtime
};

struct PlanRow {
  std::string device;
  std::string weights;  // WeightChoice::name
  int32_t devices = 1;  // tensor x pipeline parallel
  int32_t tensor_parallel = 1, pipeline_parallel = 1;
  double weight_gb = 0, kv_gb = 0;  // in all, before the split
  double tpot_ms = 0;               // 0: the device's bandwidth is not published
  bool bandwidth_bound = true;      // decode limited by bytes read (else by compute)
  double prefill_tokens_per_s = 0;
  double ttft_ms = 0;         // one prompt of PlanTarget::prompt_tokens, prefilled alone
  bool meets_target = false;  // tpot within the target (always true without a target)
};

uint64_t kv_bytes_per_token(const ModelFootprint& model, DType dtype);

// One row per device and weight choice that fits on at most 64 devices, fewest devices first:
// as many devices as memory needs, doubled while the TPOT target is missed and tensor
// parallelism can still grow.
std::vector<PlanRow> plan_capacity(const ModelFootprint& model, const std::vector<Device>& devices,
                                   const PlanTarget& target);

}  // namespace baton
