// gRPC's ByteBuffer to and from the bytes of one message.
//
//   std::string bytes = internal::Flatten(buffer);
//   ::grpc::ByteBuffer out = internal::ToByteBuffer(std::move(bytes));
#ifndef CUTOFF_GRPC_INTERNAL_BYTE_BUFFERS_HPP_
#define CUTOFF_GRPC_INTERNAL_BYTE_BUFFERS_HPP_

#include <grpcpp/support/byte_buffer.h>

#include <string>

namespace cutoff::grpc::internal {

std::string Flatten(const ::grpc::ByteBuffer& buffer);
// Large messages are taken over without a copy (the slice owns the string until gRPC is done).
::grpc::ByteBuffer ToByteBuffer(std::string bytes);

}  // namespace cutoff::grpc::internal

#endif  // CUTOFF_GRPC_INTERNAL_BYTE_BUFFERS_HPP_
