#include "core/api/live_requests.h"

namespace baton {

void LiveRequests::added(uint64_t id, const GenerationParams& params) {
  const int32_t completions = reported_completions(params);
  // A beam search computes beam_width beams however few it reports.
  const int32_t sequences = params.use_beam_search ? params.beam_width : completions;
  requests_[id] = {
      .completions = completions, .sequences = sequences, .beam_search = params.use_beam_search};
  sequences_ += sequences;
}

void LiveRequests::aborted(uint64_t id) {
  const auto it = requests_.find(id);
  if (it != requests_.end()) erase(it);
}

void LiveRequests::sample_aborted(uint64_t id, int32_t sample) {
  const auto it = requests_.find(id);
  if (it == requests_.end()) return;
  if (it->second.beam_search) return erase(it);
  end_completion(it, sample);
}

bool LiveRequests::ended_by(const SequenceUpdate& update) {
  const auto it = requests_.find(update.id);
  if (it == requests_.end()) return false;
  if (!update.error.empty()) {
    erase(it);
    return true;
  }
  if (!update.finished) return false;
  end_completion(it, update.sample);
  return !requests_.contains(update.id);
}

void LiveRequests::end_completion(std::map<uint64_t, Live>::iterator it, int32_t sample) {
  Live& live = it->second;
  if (!live.ended.insert(sample).second) return;
  if (static_cast<int32_t>(live.ended.size()) >= live.completions) return erase(it);
  // A sample's sequence is done; beams all run until the search ends.
  if (!live.beam_search) {
    --live.sequences;
    --sequences_;
  }
}

void LiveRequests::erase(std::map<uint64_t, Live>::iterator it) {
  sequences_ -= it->second.sequences;
  requests_.erase(it);
}

}  // namespace baton
