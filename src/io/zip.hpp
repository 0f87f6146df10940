#pragma once
// Private: the minimal zip container behind .npz files. Reads stored and
// deflated members (zip64 sizes and offsets included, as numpy.savez writes
// them); writes stored or deflated members with CRC-32.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace tenferro::io::zip {

struct Member {
  std::string name;
  std::vector<std::byte> data;
};

/// Every member of the archive, in central-directory order, decompressed and
/// CRC-checked. `what` names the archive in errors (InvalidArgument for a
/// damaged archive, Unsupported for encryption or another compression method).
std::vector<Member> read_archive(std::span<const std::byte> bytes, const std::string& what);

/// The bytes of an archive holding `members` (deflated when `compressed`).
std::vector<std::byte> write_archive(const std::vector<Member>& members, bool compressed);

}  // namespace tenferro::io::zip
