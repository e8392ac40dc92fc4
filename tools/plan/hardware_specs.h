#pragma once

// Published specifications of common inference accelerators, for `baton plan`'s estimates.
// Every figure is the vendor's or a cited report's (docs/scheduling.md lists the sources); none
// was measured here. Compute figures are dense (no 2:4 sparsity).

#include <span>
#include <string>

namespace baton {

// The INT8 and FP8 peaks are in docs/scheduling.md's table only: Baton's GPU kernels widen every
// weight type to f16, so the FP16 peak is the roof they work under.
struct HardwareSpec {
  std::string name;
  // Device memory in GiB: vendors' "80 GB" of HBM is 80 GiB (an H100 80GB reports 81559 MiB).
  double memory_gib = 0;
  double bandwidth_gbps = 0;  // memory read bandwidth, 10^9 bytes/s; 0: not published
  double fp16_tflops = 0;     // dense FP16/BF16 matrix throughput
  std::string source;         // where the figures come from, in a few words
  bool third_party = false;   // no vendor datasheet: a retailer's, cloud's or press figures
};

std::span<const HardwareSpec> published_hardware();

}  // namespace baton
