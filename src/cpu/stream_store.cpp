// Streaming stores (cpu/stream_store.hpp): 16-byte SSE2 stores, the x86-64
// baseline, so no processor check. A standalone add of 2^22 doubles streamed
// from 16-byte and from 64-byte vectors measured alike on the Zen 4 VM: the
// memory, not the vector width, limits these stores.

#include "cpu/stream_store.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tenferro::cpu {

bool stream_stores_available() {
#if defined(__x86_64__)
  return true;
#else
  return false;
#endif
}

void stream_fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

void stream_copy(const void* src, void* dst, std::size_t bytes) {
#if defined(__x86_64__)
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  const std::size_t head = std::min(bytes, (64 - reinterpret_cast<std::uintptr_t>(d) % 64) % 64);
  // The ends only where there are any (streamed_blocks' blocks have none).
  if (head > 0) std::memcpy(d, s, head);
  std::size_t k = head;
  for (; bytes - k >= 64; k += 64) {
    const auto* in = reinterpret_cast<const __m128i*>(s + k);
    auto* out = reinterpret_cast<__m128i*>(d + k);
    const __m128i v0 = _mm_loadu_si128(in), v1 = _mm_loadu_si128(in + 1);
    const __m128i v2 = _mm_loadu_si128(in + 2), v3 = _mm_loadu_si128(in + 3);
    _mm_stream_si128(out, v0);
    _mm_stream_si128(out + 1, v1);
    _mm_stream_si128(out + 2, v2);
    _mm_stream_si128(out + 3, v3);
  }
  if (k < bytes) std::memcpy(d + k, s + k, bytes - k);
#else
  std::memcpy(dst, src, bytes);
#endif
}

namespace {

// The size of the largest cache the first processor reports in sysfs (one
// instance of it: glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) gave the whole
// socket's 320 MiB on the Zen 4 VM, whose L3 instance is 32 MiB); 0 when
// there is none to read.
std::size_t last_level_cache_bytes() {
  std::size_t best = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream level_file(dir + "/level"), size_file(dir + "/size");
    int level = 0;
    std::string size;
    if (!(level_file >> level) || !(size_file >> size) || size.empty()) continue;
    std::size_t pos = 0;
    unsigned long long value = 0;
    try {
      value = std::stoull(size, &pos);
    } catch (const std::exception&) {
      continue;
    }
    const char unit = pos < size.size() ? size[pos] : ' ';
    const std::size_t bytes = unit == 'K'   ? value << 10
                              : unit == 'M' ? value << 20
                              : unit == 'G' ? value << 30
                                            : value;
    if (level >= 2 && bytes > best) best = bytes;
  }
  return best;
}

}  // namespace

std::size_t stream_threshold_bytes(int threads) {
  static const std::size_t bytes = [] {
    const std::size_t llc = last_level_cache_bytes();
    return llc > 0 ? llc : std::size_t{32} << 20;
  }();
  return threads <= 1 ? bytes / 4 * 3 : bytes;
}

namespace detail_stream {

std::size_t block_residue(const std::uintptr_t* streams, int count) {
  std::size_t best = 0, best_gap = 0;
  for (std::size_t at = 0; at < 4096; at += 64) {
    std::size_t gap = 4096;
    for (int k = 0; k < count; ++k) {
      const std::size_t d = (streams[k] - at) % 4096;
      gap = std::min({gap, d, 4096 - d});
    }
    if (gap > best_gap) {
      best = at;
      best_gap = gap;
    }
  }
  return best;
}

}  // namespace detail_stream

bool streams_output(std::size_t moved_bytes) {
  return stream_stores_available() && moved_bytes >= stream_threshold_bytes(2) / 2 * 3;
}

}  // namespace tenferro::cpu
