#include "backends/cpu/matmul/packed_weights.h"

#include <omp.h>

#include <compare>
#include <cstdint>
#include <dnnl.hpp>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backends/cpu/cpu_dequantize.h"
#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/matmul/matmul_float.h"
#include "backends/cpu/omp_team.h"
#include "baton/error.h"

namespace baton::cpu {
namespace {

using dnnl::memory;
using Dt = memory::data_type;
using Tag = memory::format_tag;

// oneDNN's OpenMP build sizes its parallel regions, when it plans a primitive and when it runs
// one, by omp_get_max_threads() of the calling thread: set to the team the region will get, with
// dynamic teams off (OMP_DYNAMIC could grant fewer threads than the plan's).
class OmpThreads {
 public:
  explicit OmpThreads(int threads)
      : previous_(omp_get_max_threads()), previous_dynamic_(omp_get_dynamic()) {
    omp_set_dynamic(0);
    omp_set_num_threads(omp_team_threads(threads));
  }
  ~OmpThreads() {
    omp_set_num_threads(previous_);
    omp_set_dynamic(previous_dynamic_);
  }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int previous_;
  int previous_dynamic_;
};

// Rows of x the packed layout is planned for. oneDNN's brgemm matmul picks the same weight
// layout whatever the rows, and every later plan is made for the packed layout itself.
constexpr memory::dim kPlanRows = 512;

// F32 weights are not packed: their matmuls stay on the exact GEMV kernels, whose result for a
// row of x does not depend on how many rows share the call, so an f32 model's output does not
// depend on how the engine batches requests. F16/BF16 prefill trades that for bf16 GEMM speed.
bool is_packed_dtype(DType dtype) {
  return dtype == DType::kF16 || dtype == DType::kBF16;
}

// A weight [m, k] row-major is oneDNN's weights {k, m} in the transposed (ba) layout.
memory::desc plain_weights(memory::dim m, memory::dim k, Dt type) {
  return memory::desc({k, m}, type, Tag::ba);
}

dnnl::matmul::primitive_desc plan_matmul(const dnnl::engine& engine, memory::dim n,
                                         const memory::desc& weights, Dt type) {
  const memory::dim k = weights.dims()[0], m = weights.dims()[1];
  const dnnl::matmul::desc desc(memory::desc({n, k}, type, Tag::ab), weights,
                                memory::desc({n, m}, Dt::f32, Tag::ab));
  return dnnl::matmul::primitive_desc(desc, engine);
}

// Caps oneDNN's JIT at the kernel level Baton runs (BATON_CPU_ISA), so that an AVX-512 host told
// to run its AVX2 kernels also gets the GEMMs an AVX2-only host would. oneDNN takes the cap only
// before its first kernel, hence once per process; ScopedIsaOverride does not reach it.
void cap_onednn_isa() {
  static const bool capped = [] {
    switch (active_isa()) {
      case Isa::kGeneric:
        dnnl::set_max_cpu_isa(dnnl::cpu_isa::sse41);
        break;
      case Isa::kAvx2:
        dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx2);
        break;
      case Isa::kAvx512:
        break;
    }
    return true;
  }();
  (void)capped;
}

// The packed GEMM for weights [m, k]: bf16 where oneDNN has a bf16 kernel other than its
// reference one (AVX-512 BF16, AMX), else f32 on weights widened once (exact for F16 and BF16),
// else none: oneDNN's reference kernels are slower than the GEMV kernels. Decided by the
// implementation oneDNN picks, not by the CPU's name.
std::optional<dnnl::matmul::primitive_desc> plan_packed(const dnnl::engine& engine, memory::dim m,
                                                        memory::dim k) {
  for (Dt type : {Dt::bf16, Dt::f32}) {
    try {
      dnnl::matmul::primitive_desc pd =
          plan_matmul(engine, kPlanRows, memory::desc({k, m}, type, Tag::any), type);
      if (!std::string_view(pd.impl_info_str()).starts_with("ref")) return pd;
    } catch (const dnnl::error& e) {
      if (e.status != dnnl_unimplemented) throw;
    }
  }
  return std::nullopt;
}

struct Packed {
  std::weak_ptr<Buffer> source;  // once it expires the address may hold another tensor
  DType dtype;
  Shape shape;
  memory weights;  // owns the packed copy
};

struct PlanKey {
  memory::dim n, m, k;
  Dt type;
  int threads;
  auto operator<=>(const PlanKey&) const = default;
};

struct Plan {
  dnnl::matmul matmul;
  dnnl::reorder to_bf16;  // x f32 -> bf16, for the bf16 GEMM only
};

DType to_dtype(Dt type) {
  return type == Dt::bf16 ? DType::kBF16 : DType::kF32;
}

std::vector<float> widen_f16(const Tensor& w, int threads) {
  std::vector<float> out(static_cast<size_t>(w.numel()));
  const auto* src = w.data<uint16_t>();
  const float* table = fp16_table();
  const int64_t rows = w.dim(0), k = w.dim(1);
#pragma omp parallel for num_threads(threads)
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < k; ++i) out[r * k + i] = table[src[r * k + i]];
  }
  return out;
}

dnnl::engine make_engine() {
  cap_onednn_isa();
  return dnnl::engine(dnnl::engine::kind::cpu, 0);
}

}  // namespace

std::optional<DType> packed_gemm_dtype(int64_t m, int64_t k) {
  static const dnnl::engine engine = make_engine();
  const std::optional<dnnl::matmul::primitive_desc> pd = plan_packed(engine, m, k);
  if (!pd) return std::nullopt;
  return to_dtype(pd->weights_desc().data_type());
}

struct PackedWeights::Impl {
  explicit Impl(size_t budget_bytes) : budget(budget_bytes) {}

  size_t budget;
  dnnl::engine engine = make_engine();
  std::unordered_map<const std::byte*, Packed> packed;
  size_t bytes = 0;
  mutable std::mutex plans_mutex;
  mutable std::map<PlanKey, Plan> plans;

  const Packed* find(const Tensor& w) const {
    const auto it = packed.find(w.materialize());
    if (it == packed.end() || it->second.source.expired()) return nullptr;
    const Packed& p = it->second;
    return p.dtype == w.dtype() && p.shape == w.shape() ? &p : nullptr;
  }

  void forget_expired() {
    std::erase_if(packed, [&](const auto& entry) {
      if (!entry.second.source.expired()) return false;
      bytes -= entry.second.weights.get_desc().get_size();
      return true;
    });
  }

  const Plan& plan(const PlanKey& key, const memory::desc& weights) const {
    const std::lock_guard lock(plans_mutex);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
    Plan plan{dnnl::matmul(plan_matmul(engine, key.n, weights, key.type)), {}};
    if (key.type == Dt::bf16) {
      const memory::desc x({key.n, key.k}, Dt::f32, Tag::ab);
      plan.to_bf16 = dnnl::reorder(dnnl::reorder::primitive_desc(
          engine, x, engine, memory::desc(x.dims(), Dt::bf16, Tag::ab)));
    }
    return plans.emplace(key, std::move(plan)).first->second;
  }

  // Packs w, which has no copy yet; false past the budget or where oneDNN has no GEMM for it.
  bool pack(const Tensor& w, int threads) {
    const memory::dim m = w.dim(0), k = w.dim(1);
    try {
      const OmpThreads omp(threads);
      const std::optional<dnnl::matmul::primitive_desc> pd = plan_packed(engine, m, k);
      if (!pd || bytes + pd->weights_desc().get_size() > budget) return false;
      memory copy(pd->weights_desc(), engine);
      // oneDNN 2.6 has no f16 -> bf16 or f16 -> f32 reorder, so F16 weights pass through a
      // transient f32 copy.
      std::vector<float> widened;
      memory source;
      if (w.dtype() == DType::kF16) {
        widened = widen_f16(w, threads);
        source = memory(plain_weights(m, k, Dt::f32), engine, widened.data());
      } else {
        source = memory(plain_weights(m, k, Dt::bf16), engine, w.materialize());
      }
      dnnl::stream stream(engine);
      dnnl::reorder(source, copy).execute(stream, source, copy);
      stream.wait();
      bytes += copy.get_desc().get_size();
      packed.insert_or_assign(w.materialize(), Packed{w.buffer(), w.dtype(), w.shape(), copy});
      return true;
    } catch (const dnnl::error& e) {
      if (e.status == dnnl_unimplemented) return false;
      throw Error(ErrorCategory::kBackend, "oneDNN could not pack a " +
                                               std::string(to_string(w.dtype())) + " weight " +
                                               baton::to_string(w.shape()) + ": " + e.what());
    }
  }
};

PackedWeights::PackedWeights(size_t budget_bytes) : impl_(std::make_unique<Impl>(budget_bytes)) {}
PackedWeights::~PackedWeights() = default;

bool PackedWeights::add(const Tensor& w, int threads) {
  if (w.rank() != 2 || !is_packed_dtype(w.dtype()) || !w.buffer()->is_host()) return false;
  impl_->forget_expired();
  if (impl_->find(w)) return true;
  // Packing is done once, and mostly on the loading thread, which need not be the one that runs
  // the steps (omp_team.h).
  bool packed = false;
  run_on_passing_thread([&] { packed = impl_->pack(w, threads); });
  return packed;
}

bool PackedWeights::matmul(const Tensor& x, const Tensor& w, const Tensor& out, int threads) const {
  const Packed* p = impl_->find(w);
  if (!p) return false;
  const memory::dim n = x.dim(0), k = x.dim(1), m = w.dim(0);
  const Dt type = p->weights.get_desc().data_type();
  if (n < gemm_min_rows(to_dtype(type))) return false;
  try {
    const OmpThreads omp(threads);
    const Plan& plan = impl_->plan({n, m, k, type, omp_get_max_threads()}, p->weights.get_desc());
    const dnnl::engine& engine = impl_->engine;
    memory src(memory::desc({n, k}, Dt::f32, Tag::ab), engine, x.materialize());
    memory dst(memory::desc({n, m}, Dt::f32, Tag::ab), engine, out.materialize());
    dnnl::stream stream(engine);
    if (type == Dt::bf16) {
      memory src_bf16(memory::desc({n, k}, Dt::bf16, Tag::ab), engine);
      plan.to_bf16.execute(stream, src, src_bf16);
      src = src_bf16;
    }
    plan.matmul.execute(stream,
                        {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, p->weights}, {DNNL_ARG_DST, dst}});
    stream.wait();
    return true;
  } catch (const dnnl::error& e) {
    throw Error(ErrorCategory::kBackend, "oneDNN matmul of x " + baton::to_string(x.shape()) +
                                             " by " + std::string(to_string(w.dtype())) + " " +
                                             baton::to_string(w.shape()) + " failed: " + e.what());
  }
}

size_t PackedWeights::bytes() const {
  return impl_->bytes;
}

}  // namespace baton::cpu
