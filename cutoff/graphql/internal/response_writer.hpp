// Where the values of a walk go in the response text, and where a null lands. A walk
// writes one part of the text (ResponseText): the root (`data`), or a hole an asynchronous
// field left, when it completes. A nullable object or list is written inside a frame: when
// a null reaches a non-null position while the value is being written, the text goes back to
// where the value started and becomes `null`; when an asynchronous field inside it may still
// fail later in a non-null position, the value is cut into a block that can be nulled then.
// Which values are null, and with which errors, is the execution's.
//
//   ResponseWriter w;
//   w.begin(w.root());
//   w.nullable(false, [&] { w.out() += "{\"a\":"; return false; });  // a null came: `null`
//   w.end();
//   std::string data = std::move(w).render();  // null
//
// Header-only: every value of the response goes through it.
#ifndef CUTOFF_GRAPHQL_INTERNAL_RESPONSE_WRITER_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_RESPONSE_WRITER_HPP_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cutoff/graphql/internal/response_text.hpp"

namespace cutoff::graphql::internal {

class ResponseWriter {
 public:
  using Part = ResponseText::Part;

  Part* root() noexcept { return text_.root(); }
  TextBuffer& out() noexcept { return text_.out(); }
  std::size_t size() const noexcept { return text_.size(); }  // the whole text's, not out()'s
  bool walking() const noexcept { return walking_; }

  // A walk starts writing `part`, until end().
  void begin(Part* part) {
    walking_ = true;
    part_ = part;
    walk_frames_ = frames_.size();
    text_.begin_walk(part);
  }
  void end() {
    text_.end();
    walking_ = false;
  }
  // Leaves a walk that an exception interrupted.
  void abort() {
    frames_.resize(walk_frames_);
    if (text_.current()) text_.end();
    walking_ = false;
  }

  // Writes a value with `write`, which returns false when a null reached a non-null position
  // inside it. A nullable value then becomes `null` (true: its container is fine); a
  // non-null one passes the false up.
  template <typename Write>
  bool nullable(bool non_null, Write&& write) {
    if (non_null) return write();
    frames_.push_back(Frame{text_.mark()});
    const bool ok = write();
    const Frame f = frames_.back();
    frames_.pop_back();
    if (f.block) {
      if (!ok) f.block->nulled = true;
      text_.resume(f.mark.part);
    } else if (!ok) {
      text_.truncate(f.mark);
      out() += "null";
    }
    return true;
  }

  // A null reached a non-null position: the nearest nullable position becomes null. False
  // when an earlier null already nulled it (from a field that completed later), so its
  // error is not reported again (as graphql-js does).
  bool null_in_non_null() {
    if (frames_.size() > walk_frames_) return true;  // a nullable value being written: it becomes null
    Part* target = part_->target;
    if (target->nulled) return false;
    target->nulled = true;
    return true;
  }

  // A hole at the current position, for a value that comes later; `non_null`: a null there
  // nulls the nearest nullable position around it, even once this walk has ended.
  Part* hole(bool non_null) {
    Part* target = non_null ? NullableAbove() : nullptr;
    Part* hole = text_.hole();
    if (target) hole->target = target;
    return hole;
  }

  // The whole text, nulled parts as `null`.
  std::string render() && { return std::move(text_).render(); }

 private:
  struct Frame {
    ResponseText::Mark mark;
    Part* block = nullptr;  // set when the value was cut into a block
  };

  // The nearest nullable position around what is being written, as a part that can be
  // nulled later.
  Part* NullableAbove() {
    if (frames_.size() > walk_frames_) {
      Frame& f = frames_.back();
      if (!f.block) f.block = text_.cut(f.mark);
      return f.block;
    }
    return part_->target;
  }

  ResponseText text_;
  std::vector<Frame> frames_;
  std::size_t walk_frames_ = 0;  // frames_ below this belong to an earlier walk
  Part* part_ = nullptr;         // the part being written
  bool walking_ = false;
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_RESPONSE_WRITER_HPP_
