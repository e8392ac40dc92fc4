#pragma once

// Collective communication between the processes of a distributed run: the all-reduce after a
// tensor-parallel layer, the activations passed between pipeline stages, the step a replica's
// leader broadcasts to its other ranks. Implemented over an established library (MPI here, NCCL
// for CUDA devices); Baton never carries its own transport.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace baton {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int32_t rank() const = 0;
  virtual int32_t size() const = 0;
  // The rank's number in the world, for messages that name a rank to the user.
  virtual int32_t world_rank(int32_t rank) const = 0;

  // Every rank passes the same number of floats; each ends with the element-wise sum.
  virtual void all_reduce_sum(std::span<float> data) = 0;
  // Every rank's `mine` (all the same size), concatenated in rank order into each rank's `all`.
  virtual void all_gather(std::span<const std::byte> mine, std::span<std::byte> all) = 0;
  // As all_gather, but only `root` receives; `all` is ignored elsewhere.
  virtual void gather(std::span<const std::byte> mine, std::span<std::byte> all, int32_t root) = 0;
  // `root`'s `data` into every rank's `data` (the same size everywhere).
  virtual void broadcast(std::span<std::byte> data, int32_t root) = 0;
  virtual void send(std::span<const std::byte> data, int32_t to) = 0;
  virtual void recv(std::span<std::byte> data, int32_t from) = 0;
  // As broadcast, without the timeout: a follower idles here while its leader has no work.
  virtual void wait_broadcast(std::span<std::byte> data, int32_t root) = 0;
  // The ranks that pass the same `color`, numbered by `key` (MPI_Comm_split); collective.
  virtual std::unique_ptr<Communicator> split(int32_t color, int32_t key) = 0;
  // Seconds this rank has spent in this communicator's operations since it was made: the
  // transfers and the waits for slower ranks (the cost a step pays for communicating).
  virtual double seconds_in_operations() const = 0;
  // Ends every process of the run: a rank that failed must not leave the others waiting.
  [[noreturn]] virtual void abort() = 0;
};

// A vector broadcast from `root`: its size first, so other ranks need not know it.
template <typename T>
void broadcast_vector(Communicator& comm, std::vector<T>& values, int32_t root) {
  uint64_t n = values.size();
  comm.broadcast(std::as_writable_bytes(std::span<uint64_t>(&n, 1)), root);
  values.resize(n);
  comm.broadcast(std::as_writable_bytes(std::span<T>(values)), root);
}

// One value from every rank, in rank order.
template <typename T>
std::vector<T> all_gather_value(Communicator& comm, const T& value) {
  std::vector<T> all(static_cast<size_t>(comm.size()));
  comm.all_gather(std::as_bytes(std::span<const T>(&value, 1)),
                  std::as_writable_bytes(std::span<T>(all)));
  return all;
}

}  // namespace baton
