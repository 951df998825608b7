#include "cutoff/grpc/internal/byte_buffers.hpp"

#include <vector>

namespace cutoff::grpc::internal {

std::string Flatten(const ::grpc::ByteBuffer& buffer) {
  std::vector<::grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return {};
  std::string out;
  out.reserve(buffer.Length());
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

::grpc::ByteBuffer ToByteBuffer(std::string bytes) {
  if (bytes.size() < 4096) {  // a copy costs less than the refcount a borrowed slice allocates
    ::grpc::Slice slice(bytes);
    return ::grpc::ByteBuffer(&slice, 1);
  }
  auto* owned = new std::string(std::move(bytes));
  ::grpc::Slice slice(owned->data(), owned->size(), [](void* p) { delete static_cast<std::string*>(p); }, owned);
  return ::grpc::ByteBuffer(&slice, 1);
}

}  // namespace cutoff::grpc::internal
