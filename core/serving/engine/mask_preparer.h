#pragma once

// Grammar masks computed on a thread of their own while the model computes the step whose
// logits they mask (as vLLM overlaps XGrammar's masks with the GPU's step): a step then waits
// only for the part of the masks its model step did not hide.

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace baton {

class Sampler;

class MaskPreparer {
 public:
  struct Seconds {
    double work = 0;  // spent preparing the masks, on the preparer's thread
    // The caller's time blocked in finish(): the work its own did not hide, and the preparer's
    // wake-up (on a loaded host it can exceed `work`).
    double waited = 0;
  };

  // Waits for the masks of one step: finish() at the end of the step, or the destructor where
  // the step unwinds, so that no grammar is touched after its sequence may be gone.
  class Step {
   public:
    explicit Step(MaskPreparer* preparer) : preparer_(preparer) {}
    Step(const Step&) = delete;
    Step& operator=(const Step&) = delete;
    ~Step();
    Seconds finish();

   private:
    MaskPreparer* preparer_;  // null when nothing was started or once finished
  };

  MaskPreparer() = default;
  MaskPreparer(const MaskPreparer&) = delete;
  MaskPreparer& operator=(const MaskPreparer&) = delete;
  ~MaskPreparer();

  // Starts preparing the grammar masks of `samplers` (Sampler::prepare_grammar_mask). Until the
  // Step returned is finished, the caller touches none of their grammars, nor any grammar that
  // shares their tables. The thread starts with the first grammar.
  Step start(std::vector<Sampler*> samplers);

 private:
  void run();
  Seconds wait();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Sampler*> pending_;
  bool busy_ = false;
  bool stopping_ = false;
  double work_seconds_ = 0;
  std::thread thread_;
};

}  // namespace baton
