#pragma once

#include <cstdint>
#include <map>
#include <set>

#include "baton/generation.h"
#include "core/serving/engine/engine.h"

namespace baton {

// The requests still in an engine, seen from outside it: a request ends with its last
// completion's finished update, an error update, or an abort. Aborting one sample of a sampled
// request ends only that sample; of a beam search, the whole request (as Engine::abort_sample
// does). Not thread-safe.
class LiveRequests {
 public:
  void added(uint64_t id, const GenerationParams& params);
  void aborted(uint64_t id);
  void sample_aborted(uint64_t id, int32_t sample);
  // True when `update` ended its request.
  bool ended_by(const SequenceUpdate& update);

  bool contains(uint64_t id) const { return requests_.contains(id); }
  // The sequences the live requests keep busy: their samples not yet ended, and every beam of a
  // beam search until it ends.
  int32_t sequences() const { return sequences_; }

 private:
  struct Live {
    int32_t completions = 1;  // reported: samples, or the n best beams
    int32_t sequences = 1;    // still counted in sequences_
    bool beam_search = false;
    std::set<int32_t> ended;  // completions finished or aborted
  };
  void end_completion(std::map<uint64_t, Live>::iterator it, int32_t sample);
  void erase(std::map<uint64_t, Live>::iterator it);

  std::map<uint64_t, Live> requests_;
  int32_t sequences_ = 0;
};

}  // namespace baton
