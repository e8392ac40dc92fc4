// Streams as ordered queues, each run by its own host thread; events as positions in a
// stream's queue; and what is queued on them: copies, fills, kernels and host tasks.

#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "backends/gpusim/block_runner.h"
#include "backends/gpusim/device_memory.h"
#include "backends/gpusim/device_state.h"
#include "backends/gpusim/runtime_errors.h"

namespace gpusim {

struct StreamState {
  StreamState() : worker([this] { work(); }) {}

  // Runs tasks in order. After a fault the rest are skipped: the stream is broken, as a CUDA
  // context is after an illegal access, and every later call on it reports the fault.
  void work() {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [this] { return !queue.empty() || stopping; });
      if (queue.empty()) return;
      std::function<void()> task = std::move(queue.front());
      queue.pop_front();
      const bool skip = !fault_report.empty();
      lock.unlock();
      std::string report;
      if (!skip) {
        try {
          task();
        } catch (const HostFault& f) {
          report = f.what;
        } catch (const std::exception& e) {  // out of memory for a fiber stack, say
          report = std::string("the simulator failed: ") + e.what();
        }
      }
      lock.lock();
      if (!report.empty()) fault_report = report;
      ++completed;
      changed.notify_all();
    }
  }

  Error enqueue(std::function<void()> task) {
    std::lock_guard lock(mutex);
    if (!fault_report.empty()) return fail(kErrorKernelFault, fault_report);
    queue.push_back(std::move(task));
    ++enqueued;
    changed.notify_all();
    return kSuccess;
  }

  Error wait_for(uint64_t position) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return completed >= position; });
    return fault_report.empty() ? kSuccess : fail(kErrorKernelFault, fault_report);
  }

  Error drain() {
    uint64_t position;
    {
      std::lock_guard lock(mutex);
      position = enqueued;
    }
    return wait_for(position);
  }

  void stop() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
      changed.notify_all();
    }
    worker.join();
  }

  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::function<void()>> queue;
  uint64_t enqueued = 0, completed = 0;
  bool stopping = false;
  std::string fault_report;
  std::thread worker;  // last: it starts once the members above exist
};

// An event keeps its stream's state alive: in CUDA an event outlives the stream it was recorded
// on, and waiting on it then returns at once (the destroyed stream was drained).
struct EventState {
  std::shared_ptr<StreamState> stream;
  uint64_t position = 0;
};

namespace {

std::mutex streams_mutex;
// The live streams. Never destroyed: at exit, streams still open (the default one) keep their
// workers waiting rather than join them during static destruction.
auto& streams = *new std::map<StreamState*, std::shared_ptr<StreamState>>;

StreamState* create_stream() {
  auto state = std::make_shared<StreamState>();
  std::lock_guard lock(streams_mutex);
  streams.emplace(state.get(), state);
  return state.get();
}

// Stream 0, CUDA's legacy default stream, here just one more ordered queue.
StreamState* resolve(Stream stream) {
  if (stream != nullptr) return stream;
  static StreamState* const default_stream = create_stream();
  return default_stream;
}

std::string range(const void* ptr, size_t bytes) {
  return std::to_string(bytes) + " bytes at " + std::to_string(reinterpret_cast<uintptr_t>(ptr)) +
         " (" + DeviceMemory::instance().describe(ptr) + ")";
}

std::string kernel_name(const char* signature) {
  std::string s(signature);
  const size_t start = s.find("Kernel = ");
  if (start == std::string::npos) return s;
  s = s.substr(start + 9, s.rfind(']') - start - 9);
  for (const char* noise : {"baton::gpu::", "{anonymous}::"}) {
    for (size_t at; (at = s.find(noise)) != std::string::npos;) s.erase(at, std::strlen(noise));
  }
  return s;
}

}  // namespace

Error device_synchronize() {
  // Held throughout, so no stream is destroyed while it is drained; tasks never take it.
  std::lock_guard lock(streams_mutex);
  Error first = kSuccess;
  for (const auto& [handle, s] : streams) {
    const Error e = s->drain();
    if (first == kSuccess) first = e;
  }
  return first;
}

Error stream_create_with_flags(Stream* stream, unsigned int) {
  *stream = create_stream();
  return kSuccess;
}

Error stream_destroy(Stream stream) {
  if (stream == nullptr) return fail(kErrorInvalidValue, "stream_destroy of the default stream");
  std::shared_ptr<StreamState> state;
  {
    std::lock_guard lock(streams_mutex);
    const auto it = streams.find(stream);
    if (it == streams.end()) return fail(kErrorInvalidValue, "stream_destroy of no live stream");
    state = std::move(it->second);
    streams.erase(it);
  }
  state->stop();  // runs what is queued, then the worker ends; events may keep the state
  return kSuccess;
}

Error stream_synchronize(Stream stream) {
  return resolve(stream)->drain();
}

Error event_create_with_flags(Event* event, unsigned int) {
  *event = new EventState;
  return kSuccess;
}

Error event_destroy(Event event) {
  delete event;
  return kSuccess;
}

Error event_record(Event event, Stream stream) {
  StreamState* s = resolve(stream);
  std::shared_ptr<StreamState> state;
  {
    std::lock_guard lock(streams_mutex);
    const auto it = streams.find(s);
    if (it == streams.end()) return fail(kErrorInvalidValue, "event_record on no live stream");
    state = it->second;
  }
  std::lock_guard lock(s->mutex);
  if (!s->fault_report.empty()) return fail(kErrorKernelFault, s->fault_report);
  event->stream = std::move(state);
  event->position = s->enqueued;
  return kSuccess;
}

Error event_synchronize(Event event) {
  return event->stream == nullptr ? kSuccess : event->stream->wait_for(event->position);
}

Error memcpy_async(void* dst, const void* src, size_t bytes, MemcpyKind kind, Stream stream) {
  if (bytes == 0) return kSuccess;
  DeviceMemory& memory = DeviceMemory::instance();
  StreamState* s = resolve(stream);
  const void* host_side = kind == kMemcpyHostToDevice ? src : dst;
  if (memory.in_range(host_side)) {
    return fail(kErrorInvalidValue, "copy between host and device: the host side, " +
                                        range(host_side, bytes) + ", is device memory");
  }
  if (kind == kMemcpyHostToDevice) {
    if (!memory.allocated(dst, bytes)) {
      return fail(kErrorInvalidValue,
                  "copy to the device: " + range(dst, bytes) + " is not allocated device memory");
    }
    std::function<void()> task;
    if (is_pinned(src, bytes)) {
      task = [=, &memory] {
        std::memcpy(dst, src, bytes);
        memory.mark(dst, bytes, Shadow::kWritten);
      };
    } else {
      // Pageable memory is staged at the call, so the caller may reuse it on return.
      auto staged = std::make_shared<std::vector<std::byte>>(
          static_cast<const std::byte*>(src), static_cast<const std::byte*>(src) + bytes);
      task = [=, &memory] {
        std::memcpy(dst, staged->data(), bytes);
        memory.mark(dst, bytes, Shadow::kWritten);
      };
    }
    return s->enqueue(std::move(task));
  }
  if (kind == kMemcpyDeviceToHost) {
    if (!memory.allocated(src, bytes)) {
      return fail(kErrorInvalidValue,
                  "copy to the host: " + range(src, bytes) + " is not allocated device memory");
    }
    if (const Error e = s->enqueue([=] { std::memcpy(dst, src, bytes); }); e != kSuccess) {
      return e;
    }
    // Into pageable memory the copy has completed when the call returns.
    return is_pinned(dst, bytes) ? kSuccess : s->drain();
  }
  return fail(kErrorInvalidValue, "copy of unknown kind " + std::to_string(kind));
}

Error memset_async(void* ptr, int value, size_t bytes, Stream stream) {
  if (bytes == 0) return kSuccess;
  DeviceMemory& memory = DeviceMemory::instance();
  if (!memory.allocated(ptr, bytes)) {
    return fail(kErrorInvalidValue,
                "memset: " + range(ptr, bytes) + " is not allocated device memory");
  }
  return resolve(stream)->enqueue([=, &memory] {
    std::memset(ptr, value, bytes);
    memory.mark(ptr, bytes, Shadow::kWritten);
  });
}

Error launch_kernel(const KernelLaunch& launch, std::function<void()> thread_body) {
  auto grid =
      std::make_shared<Grid>(Grid{launch, kernel_name(launch.signature), std::move(thread_body)});
  const Dim3 &b = launch.block, &g = launch.grid;
  const uint64_t threads = uint64_t{b.x} * b.y * b.z;
  const std::string what = "launch of " + grid->kernel_name + " with grid " + to_string(g) +
                           ", block " + to_string(b) + " and " +
                           std::to_string(launch.shared_bytes) + " bytes of dynamic shared memory";
  if (threads == 0 || threads > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64) {
    return fail(kErrorInvalidConfiguration, what + ": a block holds 1 to 1024 threads");
  }
  if (g.x == 0 || g.y == 0 || g.z == 0 || g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535) {
    return fail(kErrorInvalidConfiguration, what + ": grid dimension out of range");
  }
  if (launch.shared_bytes > dynamic_shared_limit(launch.kernel)) {
    return fail(kErrorInvalidConfiguration,
                what + ": over the " + std::to_string(dynamic_shared_limit(launch.kernel)) +
                    " bytes the kernel may use (func_set_attribute raises the limit)");
  }
  return resolve(launch.stream)->enqueue([grid] {
    std::string report = run_grid(*grid);
    if (!report.empty()) throw HostFault{std::move(report)};
  });
}

Error enqueue_host_task(Stream stream, const char* name, std::function<void()> task) {
  return resolve(stream)->enqueue([name, task = std::move(task)] {
    try {
      task();
    } catch (const HostFault& f) {
      throw HostFault{std::string(name) + ": " + f.what};
    }
  });
}

void check_device_read(const void* ptr, size_t bytes, const char* what) {
  DeviceMemory& memory = DeviceMemory::instance();
  if (!memory.allocated(ptr, bytes)) {
    fault(std::string(what) + ", " + range(ptr, bytes) + ", is not allocated device memory");
  }
  if (const std::byte* bad = memory.first_below(ptr, bytes, Shadow::kWritten)) {
    fault(std::string(what) + " reads memory never written: " + memory.describe(bad));
  }
}

void check_device_write(const void* ptr, size_t bytes, const char* what) {
  if (!DeviceMemory::instance().allocated(ptr, bytes)) {
    fault(std::string(what) + ", " + range(ptr, bytes) + ", is not allocated device memory");
  }
}

void mark_device_written(void* ptr, size_t bytes) {
  DeviceMemory::instance().mark(ptr, bytes, Shadow::kWritten);
}

}  // namespace gpusim
