#pragma once
// Private: the minimal zip container behind .npz files. Reads stored and
// deflated members (zip64 sizes and offsets included, as numpy.savez writes
// them); writes stored or deflated members with CRC-32.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tenferro::io::zip {

struct Member {
  std::string name;
  std::vector<std::byte> data;
};

/// One member's central-directory record, checked against its local header.
struct Entry {
  std::string name;
  std::uint64_t method = 0;  // 0 stored, 8 deflated
  std::uint32_t crc = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;     // uncompressed
  std::uint64_t local = 0;    // offset of the local header
  std::uint64_t data_at = 0;  // offset of the (compressed) data
};

/// Every member record of the archive, in central-directory order, checked
/// before anything is inflated: signatures and bounds, encryption and method,
/// sizes deflate can reach, no two members with one name or with overlapping
/// bytes (InvalidArgument, Unsupported), and members adding up to at most
/// `max_total_bytes` (OutOfMemory). `what` names the archive in errors.
std::vector<Entry> list_members(std::span<const std::byte> archive, const std::string& what,
                                std::uint64_t max_total_bytes);

/// A member's uncompressed bytes: a view into the archive for a stored
/// member, an owned buffer for a deflated one.
struct MemberBytes {
  std::unique_ptr<std::byte[]> owned;
  std::span<const std::byte> bytes;
};

/// The bytes of the member `e` of `archive` (a record of list_members),
/// inflated and CRC-checked; OutOfMemory when its buffer cannot be allocated.
MemberBytes read_member(std::span<const std::byte> archive, const Entry& e,
                        const std::string& what);

/// The bytes of an archive holding `members` (deflated when `compressed`).
std::vector<std::byte> write_archive(const std::vector<Member>& members, bool compressed);

}  // namespace tenferro::io::zip
