// The tiled GEMM: out[n, m] = x[n, k] * w[m, k]^T with x f32 and w of any WeightType, for GPUs
// without a vendor BLAS (ROCm 5.2 ships neither rocBLAS nor hipBLAS).
//
// A block of 16 x 16 threads owns a tile of kTileN rows of x by kTileM = 64 rows of w. It walks
// k in steps of kTileK = 32: all 256 threads copy the x tile and the w tile into shared memory,
// decoding w to f32 on the way (load_weight, so q8_0 / q4_0 are exact and need no scratch
// copy), then each thread accumulates its kTileN/16 x 4 outputs in registers with fp32 FMAs.
// Thread (tx, ty) owns rows ty + 16 i and columns tx + 16 j, so in the inner loop neighbouring
// threads read neighbouring shared-memory words and write neighbouring outputs. Nothing
// depends on the warp size (no shuffles; 256 threads is a multiple of 32 and 64), so the same
// code runs on NVIDIA warps and on CDNA / RDNA wavefronts.
//
// Limits: loads are scalar (rows of odd k are not vector-aligned), so it reaches a fraction of
// a tuned BLAS; few rows of x (decode) use a 16-row tile but still give one block per 64
// outputs, few blocks for a big GPU. k = 0 leaves out as zeros.

#include "backends/gpu/gemm.h"
#include "backends/gpu/kernels/device_types.cuh"

namespace baton::gpu {
namespace {

constexpr int kSide = 16;  // threads along each side of the block
constexpr int kBlockThreads = kSide * kSide;
constexpr int kColsPerThread = 4;
constexpr int kTileM = kSide * kColsPerThread;
// One quantization block per weight row, and 128 bytes of an f32 row, per step.
constexpr int kTileK = 32;
constexpr int64_t kMaxGridY = 65535;

template <WeightType type, int kRowsPerThread>
__global__ void __launch_bounds__(kBlockThreads)
    tiled_gemm_kernel(const float* x, const uint8_t* w, int64_t row_bytes, float* out, int64_t n,
                      int64_t k, int64_t m) {
  constexpr int kTileN = kSide * kRowsPerThread;
  // k-major, so the inner loop reads a row of each; the padding column puts the transposing
  // stores of 32 consecutive k into 32 different banks.
  GPU_SHARED_ARRAY(float, xs, [kTileK][kTileN + 1]);
  GPU_SHARED_ARRAY(float, ws, [kTileK][kTileM + 1]);
  const int tx = threadIdx.x % kSide, ty = threadIdx.x / kSide;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTileN;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTileM;
  float acc[kRowsPerThread][kColsPerThread] = {};
  for (int64_t k0 = 0; k0 < k; k0 += kTileK) {
    // Element e of a tile is row e / kTileK, k e % kTileK: consecutive threads read
    // consecutive elements of a row. Elements past n, m or k are zeros, which add nothing.
    for (int e = threadIdx.x; e < kTileN * kTileK; e += kBlockThreads) {
      const int r = e / kTileK, c = e % kTileK;
      const int64_t row = row0 + r, kk = k0 + c;
      xs[c][r] = row < n && kk < k ? x[row * k + kk] : 0.0f;
    }
    for (int e = threadIdx.x; e < kTileM * kTileK; e += kBlockThreads) {
      const int r = e / kTileK, c = e % kTileK;
      const int64_t col = col0 + r, kk = k0 + c;
      ws[c][r] = col < m && kk < k ? load_weight<type>(w + col * row_bytes, kk) : 0.0f;
    }
    __syncthreads();
#pragma unroll 8
    for (int c = 0; c < kTileK; ++c) {
      float a[kRowsPerThread], b[kColsPerThread];
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) a[i] = xs[c][ty + kSide * i];
#pragma unroll
      for (int j = 0; j < kColsPerThread; ++j) b[j] = ws[c][tx + kSide * j];
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) {
#pragma unroll
        for (int j = 0; j < kColsPerThread; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();  // the tiles are overwritten next step
  }
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
#pragma unroll
    for (int j = 0; j < kColsPerThread; ++j) {
      const int64_t row = row0 + ty + kSide * i, col = col0 + tx + kSide * j;
      if (row < n && col < m) out[row * m + col] = acc[i][j];
    }
  }
}

// Launches over rows of x in slices of at most kMaxGridY tiles (gridDim.y's limit).
template <WeightType type, int kRowsPerThread>
void launch_tiles(const void* w, const float* x, float* out, int64_t n, int64_t k, int64_t m,
                  gpuStream_t stream) {
  constexpr int64_t kTileN = kSide * kRowsPerThread, kSliceRows = kMaxGridY * kTileN;
  const auto* bytes = static_cast<const uint8_t*>(w);
  const int64_t row_bytes = weight_row_bytes(type, k);
  const auto blocks_m = static_cast<unsigned int>((m + kTileM - 1) / kTileM);
  for (int64_t first = 0; first < n; first += kSliceRows) {
    const int64_t rows = n - first < kSliceRows ? n - first : kSliceRows;
    const dim3 grid(blocks_m, static_cast<unsigned int>((rows + kTileN - 1) / kTileN));
    launch<&tiled_gemm_kernel<type, kRowsPerThread>>(grid, kBlockThreads, 0, stream, x + first * k,
                                                     bytes, row_bytes, out + first * m, rows, k, m);
  }
}

// 16-row tiles when x has few rows (decode, short prompts), where a 64-row tile would be mostly
// padding; 64-row tiles otherwise, which read each shared-memory word for 4 FMAs instead of 1.
template <WeightType type>
void launch(const void* w, const float* x, float* out, int64_t n, int64_t k, int64_t m,
            gpuStream_t stream) {
  if (n <= kSide) {
    launch_tiles<type, 1>(w, x, out, n, k, m, stream);
  } else {
    launch_tiles<type, 4>(w, x, out, n, k, m, stream);
  }
}

class TiledGemm final : public Gemm {
 public:
  explicit TiledGemm(gpuStream_t stream) : stream_(stream) {}
  void multiply(WeightType type, const void* w, const float* x, float* out, int64_t n, int64_t k,
                int64_t m) override {
    tiled_gemm(type, w, x, out, n, k, m, stream_);
  }

 private:
  gpuStream_t stream_;
};

}  // namespace

void tiled_gemm(WeightType type, const void* w, const float* x, float* out, int64_t n, int64_t k,
                int64_t m, gpuStream_t stream) {
  if (n == 0 || m == 0) return;
  switch (type) {
    case WeightType::kF32:
      launch<WeightType::kF32>(w, x, out, n, k, m, stream);
      break;
    case WeightType::kF16:
      launch<WeightType::kF16>(w, x, out, n, k, m, stream);
      break;
    case WeightType::kBF16:
      launch<WeightType::kBF16>(w, x, out, n, k, m, stream);
      break;
    case WeightType::kQ8_0:
      launch<WeightType::kQ8_0>(w, x, out, n, k, m, stream);
      break;
    case WeightType::kQ4_0:
      launch<WeightType::kQ4_0>(w, x, out, n, k, m, stream);
      break;
  }
  GPU_CHECK(gpuGetLastError());
}

std::unique_ptr<Gemm> make_tiled_gemm(gpuStream_t stream) {
  return std::make_unique<TiledGemm>(stream);
}

}  // namespace baton::gpu
