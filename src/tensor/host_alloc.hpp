#pragma once
// Host memory blocks for tensor storage and the CPU backend's buffer pool
// (tensor/storage.cpp): 64-byte aligned. Release with std::free. Not
// installed.

#include <cstddef>

namespace tenferro::detail {

/// At least `nbytes` bytes (a 64-byte block for 0); OutOfMemory names `op`.
void* host_alloc(std::size_t nbytes, const char* op);

}  // namespace tenferro::detail
