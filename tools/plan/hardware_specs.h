#pragma once

// Published specifications of common inference accelerators, for `baton plan`'s estimates.
// Every figure is the vendor's or a cited report's (docs/scheduling.md lists the sources); none
// was measured here. Compute figures are dense (no 2:4 sparsity).

#include <span>
#include <string>

namespace baton {

struct HardwareSpec {
  std::string name;
  double memory_gb = 0;       // device memory, 10^9 bytes
  double bandwidth_gbps = 0;  // memory read bandwidth, 10^9 bytes/s; 0: not published
  double fp16_tflops = 0;     // dense FP16/BF16 matrix throughput
  double int8_tops = 0;       // dense INT8; 0: none or not published
  double fp8_tflops = 0;      // dense FP8; 0: the chip has none
  std::string source;         // where the figures come from, in a few words
  bool third_party = false;   // no vendor datasheet: a retailer's, cloud's or press figures
};

std::span<const HardwareSpec> published_hardware();

}  // namespace baton
