#include "core/api/replica_engine.h"

#include "baton/error.h"

namespace baton {

void ReplicaEngine::add_lora(std::shared_ptr<const LoraAdapter>) {
  throw Error(ErrorCategory::kUnsupported,
              "loading a LoRA adapter while serving is not supported with data parallelism yet; "
              "give it with --lora at start-up");
}

void ReplicaEngine::remove_lora(const std::string&) {
  throw Error(ErrorCategory::kUnsupported,
              "unloading a LoRA adapter while serving is not supported with data parallelism yet");
}

}  // namespace baton
