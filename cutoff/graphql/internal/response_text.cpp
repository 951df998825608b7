#include "cutoff/graphql/internal/response_text.hpp"

#include <utility>

namespace cutoff::graphql::internal {
namespace {

// A buffer the last response on this thread left (when its text did not become the
// response itself): the next one writes into it instead of growing a new one. Null once the
// thread's objects are gone (a response text destroyed while the thread or program ends).
constexpr std::size_t kMaxSpareCapacity = 1 << 20;

std::string* SpareBuffer() {
  thread_local bool gone = false;
  if (gone) return nullptr;
  struct Holder {
    bool* gone;
    std::string buffer;
    ~Holder() { *gone = true; }
  };
  thread_local Holder holder{&gone, {}};
  return &holder.buffer;
}

// A response whose text is this much smaller than the buffer it was written in gets a copy,
// so that it does not keep a spare's capacity (up to kMaxSpareCapacity) for as long as it
// lives; the buffer stays for the next response.
constexpr std::size_t kCopyWhenCapacityOver = 4;

// Spare room at the end of a rendered text: the response's head (`{"data":`, or the errors
// before it) is inserted in front of the data and a `}` appended (Response::to_json), in
// place when it fits, instead of in a second copy of a text that may be megabytes long.
constexpr std::size_t kHeadRoom = 64;

}  // namespace

ResponseText::ResponseText() {
  if (std::string* spare = SpareBuffer()) buf_.swap_storage(*spare);
}

ResponseText::~ResponseText() {
  std::string* spare = SpareBuffer();
  if (spare && buf_.capacity() > spare->size() && buf_.capacity() <= kMaxSpareCapacity) *spare = buf_.take_storage();
}

ResponseText::Segment* ResponseText::NewSegment(std::size_t begin, std::size_t end, Part* part) {
  return &segments_.emplace(Segment{begin, end, part, nullptr, chunks_.size()});
}

void ResponseText::begin_walk(Part* p) {
  if (buf_.size() >= kChunkBytes) {
    const std::size_t size = buf_.size();
    chunked_bytes_ += size;
    chunks_.push_back(buf_.release());
    buf_.reserve(size);  // about what a walk writes
  }
  begin(p);
}

void ResponseText::Append(Part& p, Segment* s) noexcept {
  if (p.tail)
    p.tail->next = s;
  else
    p.head = s;
  p.tail = s;
}

void ResponseText::Close(Part& p) {
  if (buf_.size() > p.run) Append(p, NewSegment(p.run, buf_.size(), nullptr));
  p.run = buf_.size();
}

void ResponseText::truncate(const Mark& m) noexcept {
  Part& p = *m.part;
  buf_.truncate(m.offset);
  p.tail = m.tail;
  if (m.tail)
    m.tail->next = nullptr;
  else
    p.head = nullptr;
  p.run = m.run;
}

ResponseText::Part* ResponseText::cut(const Mark& m) {
  Part& outer = *m.part;
  Close(outer);
  Part* block = &parts_.emplace();
  // The segments after the mark: the first may be the run that was open at the mark, which
  // holds text from before it too.
  Segment* first = m.tail ? m.tail->next : outer.head;
  Segment* keep = m.tail;  // the last segment that stays outside
  Segment* last = outer.tail;
  if (first && !first->part && first->begin < m.offset) {
    Segment* rest = first->end > m.offset ? NewSegment(m.offset, first->end, nullptr) : nullptr;
    first->end = m.offset;
    keep = first;
    if (rest) {
      rest->next = first->next;
      if (last == first) last = rest;
    } else if (last == first) {
      last = nullptr;
    }
    first = rest ? rest : first->next;
  }
  if (first) {
    block->head = first;
    block->tail = last;
  }
  outer.tail = keep;
  if (keep)
    keep->next = nullptr;
  else
    outer.head = nullptr;
  Append(outer, NewSegment(0, 0, block));
  begin(block);
  return block;
}

ResponseText::Part* ResponseText::hole() {
  Close(*current_);
  Part* h = &parts_.emplace();
  Append(*current_, NewSegment(0, 0, h));
  return h;
}

void ResponseText::Render(const Part& part, std::string& out) const {
  // A part whose last segment is a part goes on there without recursing: the rest of a long
  // list is a chain of such parts, one per time its walk yielded.
  for (const Part* p = &part; p;) {
    if (p->nulled) {
      out += "null";
      return;
    }
    const Part* last = nullptr;
    for (const Segment* s = p->head; s; s = s->next) {
      if (s->part && !s->next)
        last = s->part;
      else if (s->part)
        Render(*s->part, out);
      else
        out.append((s->chunk < chunks_.size() ? chunks_[s->chunk].data() : buf_.data()) + s->begin, s->end - s->begin);
    }
    p = last;
  }
}

std::string ResponseText::render() && {
  if (root_.nulled) return "null";
  // Everything completed at once: the buffer is the text.
  if (!root_.head || (chunks_.empty() && root_.head == root_.tail && !root_.head->part && root_.head->begin == 0 &&
                      root_.head->end == buf_.size())) {
    if (!root_.head) return {};
    if (buf_.capacity() > kCopyWhenCapacityOver * buf_.size() + 64) return std::string(buf_.view());
    return buf_.release();
  }
  std::string out;
  out.reserve(chunked_bytes_ + buf_.size() + kHeadRoom);
  Render(root_, out);
  return out;
}

}  // namespace cutoff::graphql::internal
