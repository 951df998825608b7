// ResponseText: the JSON text of a GraphQL response's `data`, written in one pass while its
// fields complete out of order.
//
// Fields that complete at once are written straight into one buffer, in selection order.
// A field whose value comes later (an asynchronous resolver) leaves a hole in the text, which
// its completion fills. Any part of the text may still have to become `null` after it was
// written (a non-null field inside it failed later): the writer marks where such a value
// starts, and either truncates back to the mark (the failure came while it was being
// written) or cuts the text since the mark into a block that can be nulled later (a hole
// inside it may still fail). Holes and blocks are parts; render() writes a nulled part as
// `null`. The executor uses it; nothing here knows about GraphQL.
//
//   ResponseText text;
//   text.begin(text.root());
//   text.out() += R"({"a":1,"b":)";
//   ResponseText::Part* b = text.hole();  // b's value comes later
//   text.out() += "}";
//   text.end();
//   text.begin(b);
//   text.out() += "2";
//   text.end();
//   std::string json = std::move(text).render();  // {"a":1,"b":2}
//
// A long text is kept in chunks: a walk that begins when the buffer holds kChunkBytes or
// more writes into a fresh one, so a response of megabytes is copied once, when rendered,
// rather than each time its buffer doubles.
//
// Not thread-safe. One part is written at a time: begin(p) ... end().
#ifndef CUTOFF_GRAPHQL_INTERNAL_RESPONSE_TEXT_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_RESPONSE_TEXT_HPP_

#include <cstddef>
#include <string>
#include <vector>

#include "cutoff/graphql/internal/blocks.hpp"
#include "cutoff/graphql/internal/text_buffer.hpp"

namespace cutoff::graphql::internal {

class ResponseText {
 public:
  struct Part;
  // A run of text [begin, end) of a chunk, or a part.
  struct Segment {
    std::size_t begin = 0;
    std::size_t end = 0;
    Part* part = nullptr;
    Segment* next = nullptr;
    std::size_t chunk = 0;  // index into chunks_; chunks_.size(): the buffer being written
  };
  // A hole, a block, or the root: a list of segments, rendered as `null` once nulled.
  struct Part {
    Segment* head = nullptr;
    Segment* tail = nullptr;
    std::size_t run = 0;  // where the open text run starts while this part is written
    bool nulled = false;
    // Where a null arriving at this part's own position lands: the part itself when the
    // position is nullable (the default), else the nearest nullable part around it. Set by
    // the caller.
    Part* target = this;
  };
  // A position in the part being written.
  struct Mark {
    Part* part;
    Segment* tail;
    std::size_t run;
    std::size_t offset;
  };

  ResponseText();
  ~ResponseText();
  ResponseText(const ResponseText&) = delete;
  ResponseText& operator=(const ResponseText&) = delete;

  Part* root() noexcept { return &root_; }
  Part* current() const noexcept { return current_; }

  // Where text is appended (to the current part): the chunk being written.
  TextBuffer& out() noexcept { return buf_; }
  // The bytes written so far, every chunk's.
  std::size_t size() const noexcept { return chunked_bytes_ + buf_.size(); }

  // A walk writes `p` from its end, until end(). A mark taken before it must not be
  // truncated to or cut at during it (its text may be in an earlier chunk).
  void begin_walk(Part* p);

  // Writing continues at the end of `p`, until end().
  void begin(Part* p) noexcept {
    current_ = p;
    p->run = buf_.size();
  }
  void end() {
    Close(*current_);
    current_ = nullptr;
  }

  Mark mark() const noexcept { return Mark{current_, current_->tail, current_->run, buf_.size()}; }

  // Discards everything written to the current part since `m` (parts included).
  void truncate(const Mark& m) noexcept;

  // What was written to the current part since `m` becomes a new block, which sits where `m`
  // was and becomes the current part. End it with resume(m.part).
  Part* cut(const Mark& m);

  // Ends the current part (a block from cut()) and goes on writing `outer` after it.
  void resume(Part* outer) {
    Close(*current_);
    begin(outer);
  }

  // A new hole at the current position.
  Part* hole();

  // The whole text, nulled parts as `null`. Call after end().
  std::string render() &&;

 private:
  Segment* NewSegment(std::size_t begin, std::size_t end, Part* part);
  void Append(Part& p, Segment* s) noexcept;
  void Close(Part& p);  // the open text run becomes a segment
  void Render(const Part& p, std::string& out) const;

  static constexpr std::size_t kChunkBytes = 256 * 1024;

  TextBuffer buf_;                   // the chunk being written
  std::vector<std::string> chunks_;  // the full ones before it
  std::size_t chunked_bytes_ = 0;    // their sizes' sum
  Part root_;
  Part* current_ = nullptr;
  Blocks<Segment> segments_;
  Blocks<Part> parts_;
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_RESPONSE_TEXT_HPP_
