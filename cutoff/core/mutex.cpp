#include "cutoff/core/mutex.hpp"

namespace cutoff {

boost::asio::awaitable<Mutex::Guard> Mutex::Lock(Mutex* self, Context ctx) {
  ctx.check();
  if (!self->permit_.TryTake()) co_await self->permit_.WaitForPermit(ctx);
  co_return Guard(self);
}

}  // namespace cutoff
