#pragma once

#include <string>

#include "baton/async_llm.h"
#include "tools/request_json.h"
#include "tools/serve/engine_client.h"
#include "tools/serve/served_adapters.h"
#include "tools/serve/server_metrics.h"

namespace baton::serve {

// What every route handler works with.
struct RouteContext {
  AsyncLLM& llm;
  EngineClient& engine;
  ServerMetrics& metrics;
  std::string model_name;    // --served-model-name, else the model file's name
  ServedAdapters& adapters;  // LoRA adapters requests may name as their model
  int32_t context_size = 0;
  int32_t vocab_size = 0;
  cli::RequestLimits limits;
  bool priority_scheduling = false;  // --scheduling-policy priority: requests may set priority
};

}  // namespace baton::serve
