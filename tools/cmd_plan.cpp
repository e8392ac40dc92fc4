// `baton plan`: which hardware and weight type serve a model at a context, concurrency and
// latency target, from the model's exact footprint, published accelerator specs and this host as
// measured (tools/plan/, docs/scheduling.md).

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "baton/error.h"
#include "core/serving/kv_cache/paged_kv_cache.h"
#include "tools/commands.h"
#include "tools/model_bench/roofline.h"
#include "tools/model_flags.h"
#include "tools/model_tools/synthetic_model.h"
#include "tools/option_flags.h"
#include "tools/plan/capacity_plan.h"

namespace baton::cli {
namespace {

// The choices shown unless --weights all: the file's own and the common serving types.
const std::set<std::string> kCommonWeights = {"as stored", "f16",  "q8_0",   "int8",
                                              "fp8",       "q4_0", "q4_k_m", "int4_g128"};

struct PlanFlags {
  std::string model;
  std::string shape;
  PlanTarget target;
  KvCacheType kv_cache_dtype = KvCacheType::kF16;
  std::string weights = "common";
  bool measure_host = true;
  int32_t threads = 0;
  bool json = false;
};

Device measured_host(const PlanFlags& f, const ModelFootprint& model) {
  Device host{.spec = {.name = "this host (measured)",
                       .memory_gib = static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
                                     static_cast<double>(sysconf(_SC_PAGESIZE)) / 1073741824.0,
                       .source = "baton plan's own read-bandwidth and matmul runs"}};
  host.spec.bandwidth_gbps = ReadBandwidthProbe(256ull << 20, f.threads).measure(3) / 1e9;
  std::set<DType> types;
  for (const WeightChoice& w : model.weights) types.insert(w.type);
  for (const DType type : types) {
    // The model's own up projection over a prompt: the peak this model's matmuls can reach,
    // not a large matrix's.
    host.flops_by_weight_type[type] = measure_matmul_flops(
        "cpu", f.threads, type, f.target.prompt_tokens, model.config.n_ff, model.config.n_embd, 3);
  }
  // Host memory also holds the OS and the server; half is what a plan should count on.
  host.usable_memory_fraction = 0.5;
  return host;
}

std::string format_ms(double ms) {
  if (ms <= 0) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, ms < 10 ? "%.2f" : "%.1f", ms);
  return text;
}

std::string split_text(const PlanRow& r) {
  if (r.devices == 1) return "1";
  return std::to_string(r.devices) + " (TP " + std::to_string(r.tensor_parallel) + " x PP " +
         std::to_string(r.pipeline_parallel) + ")";
}

void print_footprint(const ModelFootprint& m, const PlanFlags& f) {
  std::printf("model: %s, %.2fB parameters, %d layers, %d KV heads of %d\n\n", m.name.c_str(),
              static_cast<double>(m.n_params) / 1e9, m.config.n_layer, m.config.n_head_kv,
              m.config.head_dim);
  std::printf("| weights | GB | read per decode step GB |\n| --- | ---: | ---: |\n");
  for (const WeightChoice& w : m.weights) {
    std::printf("| %s (%s) | %.3f | %.3f |\n", w.name.c_str(),
                std::string(to_string(w.type)).c_str(), static_cast<double>(w.bytes) / 1e9,
                static_cast<double>(w.decode_bytes) / 1e9);
  }
  std::printf("\n| KV cache | KiB per token | GB for %d x %d tokens |\n| --- | ---: | ---: |\n",
              f.target.concurrency, f.target.context);
  for (const KvChoice& kv : m.kv) {
    std::printf(
        "| %s | %.2f | %.3f |\n", std::string(to_string(kv.dtype)).c_str(),
        static_cast<double>(kv.bytes_per_token) / 1024.0,
        static_cast<double>(kv.bytes_per_token) * f.target.context * f.target.concurrency / 1e9);
  }
}

void print_plan(const std::vector<PlanRow>& rows, const PlanFlags& f) {
  std::printf(
      "\nestimates for %d sequences of %d tokens, KV %s%s (roofline: real kernels reach "
      "a fraction of it)\n\n",
      f.target.concurrency, f.target.context, option_value_name(f.kv_cache_dtype),
      f.target.target_tpot_ms > 0
          ? (", target TPOT " + std::to_string(f.target.target_tpot_ms) + " ms").c_str()
          : "");
  std::printf(
      "| device | weights | devices | weights GB | KV GB | TPOT ms | decode bound | prefill tok/s "
      "| TTFT ms | meets target |\n"
      "| --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | --- |\n");
  const PlanRow* best = nullptr;
  for (const PlanRow& r : rows) {
    std::printf("| %s | %s | %s | %.2f | %.2f | %s | %s | %.0f | %s | %s |\n", r.device.c_str(),
                r.weights.c_str(), split_text(r).c_str(), r.weight_gb, r.kv_gb,
                format_ms(r.tpot_ms).c_str(),
                r.tpot_ms > 0 ? (r.bandwidth_bound ? "bandwidth" : "compute") : "n/a",
                r.prefill_tokens_per_s, format_ms(r.ttft_ms).c_str(),
                r.meets_target ? "yes" : "no");
    if (r.meets_target && r.tpot_ms > 0 && !best) best = &r;
  }
  if (f.target.target_tpot_ms <= 0) {
    std::printf("\nno TPOT target given (--target-tpot-ms): every row that fits is listed\n");
  } else if (best) {
    std::printf(
        "\nfewest devices meeting it: %s x %s with %s weights (TPOT %.1f ms, an estimate)\n",
        split_text(*best).c_str(), best->device.c_str(), best->weights.c_str(), best->tpot_ms);
  } else {
    std::printf("\nno listed device meets the target within 64 devices\n");
  }
  std::printf("\nsources (docs/scheduling.md):\n");
  for (const HardwareSpec& spec : published_hardware()) {
    std::printf("  %s: %s%s\n", spec.name.c_str(), spec.source.c_str(),
                spec.third_party ? " (third-party figures)" : "");
  }
}

nlohmann::json plan_json(const ModelFootprint& m, const std::vector<PlanRow>& rows) {
  nlohmann::json weights = nlohmann::json::array(), kv = nlohmann::json::array(),
                 out = nlohmann::json::array();
  for (const WeightChoice& w : m.weights) {
    weights.push_back({{"name", w.name},
                       {"type", to_string(w.type)},
                       {"bytes", w.bytes},
                       {"decode_bytes", w.decode_bytes}});
  }
  for (const KvChoice& k : m.kv) {
    kv.push_back({{"dtype", to_string(k.dtype)}, {"bytes_per_token", k.bytes_per_token}});
  }
  for (const PlanRow& r : rows) {
    out.push_back({{"device", r.device},
                   {"weights", r.weights},
                   {"devices", r.devices},
                   {"tensor_parallel", r.tensor_parallel},
                   {"pipeline_parallel", r.pipeline_parallel},
                   {"weight_gb", r.weight_gb},
                   {"kv_gb", r.kv_gb},
                   {"tpot_ms", r.tpot_ms > 0 ? nlohmann::json(r.tpot_ms) : nlohmann::json()},
                   {"bandwidth_bound", r.bandwidth_bound},
                   {"prefill_tokens_per_s", r.prefill_tokens_per_s},
                   {"ttft_ms", r.ttft_ms},
                   {"meets_target", r.meets_target}});
  }
  return {{"model", m.name},
          {"parameters", m.n_params},
          {"weights", weights},
          {"kv_cache", kv},
          {"plan", out},
          {"note", "estimates from the roofline: bytes over bandwidth, work over peak"}};
}

int run_plan(PlanFlags f) {
  if (f.target.context < 1 || f.target.concurrency < 1 || f.target.prompt_tokens < 1) {
    throw Error(ErrorCategory::kInvalidArgument,
                "--ctx, --concurrency and --prompt-tokens must be positive");
  }
  f.target.kv_dtype = kv_cache_dtype(f.kv_cache_dtype);
  if (f.model.empty() && f.shape.empty()) {
    throw Error(ErrorCategory::kInvalidArgument, "give a model (-m) or a named shape (--shape)");
  }
  ModelFootprint model = f.shape.empty()
                             ? model_footprint(gguf::GgufFile::open(resolve_model_path(f.model)))
                             : shape_footprint(f.shape);
  if (f.weights != "all") {
    std::erase_if(model.weights,
                  [](const WeightChoice& w) { return !kCommonWeights.contains(w.name); });
  }
  std::vector<Device> devices;
  for (const HardwareSpec& spec : published_hardware()) devices.push_back({.spec = spec});
  if (f.measure_host) devices.push_back(measured_host(f, model));
  const std::vector<PlanRow> rows = plan_capacity(model, devices, f.target);
  if (f.json) {
    std::cout << plan_json(model, rows).dump(2) << "\n";
  } else {
    print_footprint(model, f);
    print_plan(rows, f);
  }
  return 0;
}

}  // namespace

Action add_plan_command(CLI::App& app) {
  auto f = std::make_shared<PlanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "estimate the memory and devices a model needs for a load, and its speed on each");
  CLI::Option* model =
      cmd->add_option("-m,--model", f->model, "GGUF file or Hugging Face checkpoint directory");
  cmd->add_option("--shape", f->shape,
                  "instead of -m, a named model shape with f16 weights as stored: " +
                      synthetic_shape_names())
      ->excludes(model);
  cmd->add_option("--ctx", f->target.context, "tokens per sequence")->capture_default_str();
  cmd->add_option("--concurrency", f->target.concurrency, "sequences decoding together")
      ->capture_default_str();
  cmd->add_option("--prompt-tokens", f->target.prompt_tokens, "prompt length, for prefill")
      ->capture_default_str();
  cmd->add_option("--target-tpot-ms", f->target.target_tpot_ms,
                  "time per output token to meet (default: none)");
  add_option_flag(*cmd, "kv_cache_dtype", f->kv_cache_dtype);
  cmd->add_option("--weights", f->weights, "weight types to consider: common or all")
      ->check(CLI::IsMember({"common", "all"}))
      ->capture_default_str();
  cmd->add_flag("--no-host{false}", f->measure_host,
                "leave out this host (measuring it takes a few seconds)");
  cmd->add_option("-t,--threads", f->threads,
                  "CPU threads for this host's measurement (default: all cores)");
  cmd->add_flag("--json", f->json, "print one JSON object instead of the tables");
  return [f] { return run_plan(*f); };
}

}  // namespace baton::cli
