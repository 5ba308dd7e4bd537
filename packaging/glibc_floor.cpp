// Part of every self-contained module (cmake/SelfContained.cmake): it keeps the module's glibc
// floor low. The static libstdc++ of Debian 12's GCC has std::random_device call arc4random,
// new in glibc 2.36; the linker sends that call here instead (--wrap=arc4random), to getrandom
// (glibc 2.25), or /dev/urandom where the kernel lacks it. Like glibc's own arc4random, it aborts
// when no randomness can be had at all.
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace {

bool fill(unsigned char* out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::getrandom(out + got, n - got, 0);
    if (r > 0) {
      got += static_cast<std::size_t>(r);
    } else if (r < 0 && errno != EINTR) {
      break;
    }
  }
  if (got == n) return true;
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  while (got < n) {
    const ssize_t r = ::read(fd, out + got, n - got);
    if (r > 0) {
      got += static_cast<std::size_t>(r);
    } else if (r == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fd);
  return got == n;
}

}  // namespace

// NOLINTNEXTLINE(bugprone-reserved-identifier): the name the linker's --wrap gives.
extern "C" __attribute__((visibility("hidden"))) std::uint32_t __wrap_arc4random(void) {
  std::uint32_t value = 0;
  if (!fill(reinterpret_cast<unsigned char*>(&value), sizeof value)) std::abort();
  return value;
}
