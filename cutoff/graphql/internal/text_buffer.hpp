// TextBuffer: where a response's JSON text is written, field after field. Appending to a
// std::string costs a call to memcpy for every member name and value, most of them a few
// bytes long; here an append is one capacity check and, up to 16 bytes, a copy the compiler
// inlines. The storage is a std::string kept at its full capacity, so the finished text is
// handed over as a std::string without a copy.
//
//   TextBuffer out;
//   out.append(R"({"id":)");
//   out.push_back('7');
//   out += ",\"n\":";
//   out.append_int(-42);
//   out += "}";
//   std::string text = out.release();  // {"id":7,"n":-42}
//
// Header-only: every byte of a response goes through it.
#ifndef CUTOFF_GRAPHQL_INTERNAL_TEXT_BUFFER_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_TEXT_BUFFER_HPP_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace cutoff::graphql::internal {

class TextBuffer {
 public:
  TextBuffer() = default;

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::size_t capacity() const noexcept { return storage_.size(); }
  const char* data() const noexcept { return storage_.data(); }
  std::string_view view() const noexcept { return {storage_.data(), size_}; }

  void clear() noexcept { size_ = 0; }
  // Drops the text from `n` on (n <= size()).
  void truncate(std::size_t n) noexcept { size_ = std::min(n, size_); }
  void reserve(std::size_t n) {
    if (n > capacity()) storage_.resize(n);
  }

  void push_back(char c) {
    if (size_ == capacity()) [[unlikely]]
      Grow(1);
    storage_[size_++] = c;
  }
  void append(const char* p, std::size_t n) {
    if (capacity() - size_ < n) [[unlikely]]
      Grow(n);
    Copy(storage_.data() + size_, p, n);
    size_ += n;
  }
  void append(std::string_view s) { append(s.data(), s.size()); }
  TextBuffer& operator+=(std::string_view s) {
    append(s);
    return *this;
  }
  TextBuffer& operator+=(char c) {
    push_back(c);
    return *this;
  }

  // A decimal integer, written in place two digits at a time.
  void append_int(std::int64_t v) {
    if (capacity() - size_ < 20) [[unlikely]]
      Grow(20);
    char* p = storage_.data() + size_;
    std::uint64_t u = static_cast<std::uint64_t>(v);
    if (v < 0) {
      *p++ = '-';
      u = 0 - u;
    }
    const int n = Digits(u);
    char* end = p + n;
    char* q = end;
    while (u >= 100) {
      q -= 2;
      std::memcpy(q, kDigitPairs + 2 * (u % 100), 2);
      u /= 100;
    }
    if (u >= 10) {
      q -= 2;
      std::memcpy(q, kDigitPairs + 2 * u, 2);
    } else {
      *--q = static_cast<char>('0' + u);
    }
    size_ = static_cast<std::size_t>(end - storage_.data());
  }

  // The text as a std::string, in this buffer's storage; the buffer is left empty.
  std::string release() {
    storage_.resize(size_);
    size_ = 0;
    return std::exchange(storage_, std::string());
  }
  // Exchanges storage with `other` (a spare buffer kept between responses, as
  // take_storage() left it); the text is dropped.
  void swap_storage(std::string& other) noexcept {
    storage_.swap(other);
    storage_.resize(storage_.capacity());  // within the capacity: no allocation
    size_ = 0;
  }
  // The storage, at its full size, for a later swap_storage(); the buffer is left empty.
  std::string take_storage() noexcept {
    size_ = 0;
    return std::exchange(storage_, std::string());
  }

 private:
  // Copies n bytes; up to 16 with two overlapping fixed-size moves.
  static void Copy(char* to, const char* from, std::size_t n) noexcept {
    if (n >= 8 && n <= 16) {
      std::uint64_t a, b;
      std::memcpy(&a, from, 8);
      std::memcpy(&b, from + n - 8, 8);
      std::memcpy(to, &a, 8);
      std::memcpy(to + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
      std::uint32_t a, b;
      std::memcpy(&a, from, 4);
      std::memcpy(&b, from + n - 4, 4);
      std::memcpy(to, &a, 4);
      std::memcpy(to + n - 4, &b, 4);
    } else if (n > 0 && n < 4) {
      to[0] = from[0];
      to[n / 2] = from[n / 2];
      to[n - 1] = from[n - 1];
    } else if (n > 16) {
      std::memcpy(to, from, n);
    }
  }

  static constexpr char kDigitPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";

  static int Digits(std::uint64_t u) noexcept {
    int n = 1;
    for (;;) {  // four digits a step: the values of a response are mostly short
      if (u < 10) return n;
      if (u < 100) return n + 1;
      if (u < 1000) return n + 2;
      if (u < 10000) return n + 3;
      u /= 10000;
      n += 4;
    }
  }

  [[gnu::noinline]] void Grow(std::size_t more) {
    storage_.resize(std::max({std::size_t{256}, 2 * capacity(), size_ + more}));
  }

  std::string storage_;  // its size() is the capacity in use; [size_, size()) is spare
  std::size_t size_ = 0;
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_TEXT_BUFFER_HPP_
