#include "core/formats/gguf/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "baton/error.h"

namespace baton::gguf {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what, int err) {
  throw Error(ErrorCategory::kIo, path.string() + ": " + what + ": " + std::strerror(err));
}

// Closes the descriptor however open() leaves; the mapping stays valid after close.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path) {
  // O_NONBLOCK so that a FIFO given by mistake fails the regular-file check instead of hanging.
  const FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) fail(path, "cannot open", errno);
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) fail(path, "cannot stat", errno);
  if (!S_ISREG(st.st_mode)) {
    throw Error(ErrorCategory::kIo, path.string() + ": not a regular file");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size == 0) return;  // mmap rejects a zero length; the parser reports the empty file
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (data == MAP_FAILED) fail(path, "cannot map " + std::to_string(size) + " bytes", errno);
  data_ = static_cast<const std::byte*>(data);
  size_ = size;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace baton::gguf
