// A small zip reader and writer (PKWARE APPNOTE 6.3): enough for .npz.

#include "io/zip.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>

#include "tenferro/core/error.hpp"

namespace tenferro::io::zip {

namespace {

constexpr const char* kOp = "load_npz";
constexpr std::uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50,
                        kEnd64Sig = 0x06064b50, kEnd64LocatorSig = 0x07064b50;

class Reader {
 public:
  Reader(std::span<const std::byte> bytes, const std::string& what) : b_(bytes), what_(what) {}

  std::uint64_t u(std::size_t at, int n) const {
    if (at + static_cast<std::size_t>(n) > b_.size() || at + static_cast<std::size_t>(n) < at) {
      fail(ErrorKind::InvalidArgument, kOp, what_, " is truncated: a zip record at byte ", at,
           " runs past the end (", b_.size(), " bytes); the archive is damaged");
    }
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(b_[at + i]);
    return v;
  }
  std::span<const std::byte> range(std::uint64_t at, std::uint64_t n) const {
    if (at > b_.size() || n > b_.size() - at) {
      fail(ErrorKind::InvalidArgument, kOp, what_, " is truncated: ", n, " bytes at offset ", at,
           " run past the end (", b_.size(), " bytes); the archive is damaged");
    }
    return b_.subspan(static_cast<std::size_t>(at), static_cast<std::size_t>(n));
  }
  std::size_t size() const { return b_.size(); }

 private:
  std::span<const std::byte> b_;
  const std::string& what_;
};

// Inflates `in` into `out` (exactly `size` bytes), in chunks zlib's 32-bit
// counters can take, so members above 4 GiB inflate too.
void inflate_raw(std::span<const std::byte> in, std::byte* out, std::uint64_t size,
                 const std::string& what, const std::string& name) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
    fail(ErrorKind::Internal, kOp, "zlib inflateInit2 failed");
  }
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 30;
  std::uint64_t in_left = in.size(), out_left = size;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
  zs.next_out = reinterpret_cast<Bytef*>(out);
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (zs.avail_in == 0 && in_left > 0) {
      zs.avail_in = static_cast<uInt>(std::min(in_left, kChunk));
      in_left -= zs.avail_in;
    }
    if (zs.avail_out == 0 && out_left > 0) {
      zs.avail_out = static_cast<uInt>(std::min(out_left, kChunk));
      out_left -= zs.avail_out;
    }
    rc = inflate(&zs, Z_NO_FLUSH);
  }
  const std::uint64_t produced = size - out_left - zs.avail_out;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || produced != size) {
    fail(ErrorKind::InvalidArgument, kOp, what, ": member '", name,
         "' does not inflate to its recorded size ", size, " (zlib code ", rc,
         "); the archive is damaged");
  }
}

std::uint32_t crc_of(std::span<const std::byte> data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  std::size_t done = 0;
  while (done < data.size()) {
    const std::size_t n = std::min<std::size_t>(data.size() - done, 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data() + done), static_cast<uInt>(n));
    done += n;
  }
  return static_cast<std::uint32_t>(crc);
}

// The central-directory record at `p`, its zip64 fields resolved and its
// local header checked; `next` is set to the following record's offset.
Entry read_entry(const Reader& r, std::size_t p, std::uint64_t index, const std::string& what,
                 std::uint64_t& next) {
  if (r.u(p, 4) != kCentralSig) {
    fail(ErrorKind::InvalidArgument, kOp, what, ": central directory entry ", index,
         " has a bad signature; the archive is damaged");
  }
  Entry e;
  const auto flags = r.u(p + 8, 2);
  e.method = r.u(p + 10, 2);
  e.crc = static_cast<std::uint32_t>(r.u(p + 16, 4));
  e.compressed_size = r.u(p + 20, 4);
  e.size = r.u(p + 24, 4);
  const auto name_len = r.u(p + 28, 2), extra_len = r.u(p + 30, 2), comment_len = r.u(p + 32, 2);
  e.local = r.u(p + 42, 4);
  const auto name_bytes = r.range(p + 46, name_len);
  e.name.assign(reinterpret_cast<const char*>(name_bytes.data()), name_bytes.size());
  // zip64 extra field: the 0xFFFFFFFF fields, in the order usize, csize, offset.
  std::size_t x = p + 46 + name_len;
  const std::size_t x_end = x + extra_len;
  while (x + 4 <= x_end) {
    const auto id = r.u(x, 2), len = r.u(x + 2, 2);
    if (id == 0x0001) {
      std::size_t f = x + 4;
      if (e.size == 0xFFFFFFFF) e.size = r.u(f, 8), f += 8;
      if (e.compressed_size == 0xFFFFFFFF) e.compressed_size = r.u(f, 8), f += 8;
      if (e.local == 0xFFFFFFFF) e.local = r.u(f, 8);
    }
    x += 4 + len;
  }
  next = p + 46 + name_len + extra_len + comment_len;
  if (flags & 1u) {
    fail(ErrorKind::Unsupported, kOp, what, ": member '", e.name,
         "' is encrypted; decrypt the archive first");
  }
  if (e.method != 0 && e.method != 8) {
    fail(ErrorKind::Unsupported, kOp, what, ": member '", e.name, "' uses zip compression method ",
         e.method, "; only stored (numpy.savez) and deflate (numpy.savez_compressed) are read");
  }
  if (e.local > r.size() || r.u(static_cast<std::size_t>(e.local), 4) != kLocalSig) {
    fail(ErrorKind::InvalidArgument, kOp, what, ": member '", e.name,
         "' has a bad local header; the archive is damaged");
  }
  const auto lp = static_cast<std::size_t>(e.local);
  e.data_at = e.local + 30 + r.u(lp + 26, 2) + r.u(lp + 28, 2);
  r.range(e.data_at, e.compressed_size);  // the data lie inside the archive
  if (e.method == 0 && e.compressed_size != e.size) {
    fail(ErrorKind::InvalidArgument, kOp, what, ": stored member '", e.name, "' has size ",
         e.compressed_size, " but records ", e.size, " uncompressed bytes");
  }
  // Deflate expands at most about 1032:1; a larger claim is a damaged (or
  // hostile) record, refused before allocating for it.
  if (e.method == 8 && e.size > 1032 * e.compressed_size + 1024) {
    fail(ErrorKind::InvalidArgument, kOp, what, ": member '", e.name, "' claims ", e.size,
         " bytes from ", e.compressed_size,
         " compressed ones, more than deflate can expand to; the archive is damaged");
  }
  return e;
}

// Refuses two records with one name, and records whose bytes (local header
// through data) overlap: several entries pointing at one deflated member
// would inflate it again and again from a small file.
void check_disjoint(const std::vector<Entry>& entries, const std::string& what) {
  std::vector<const Entry*> by_name, by_offset;
  for (const Entry& e : entries) by_name.push_back(&e), by_offset.push_back(&e);
  std::sort(by_name.begin(), by_name.end(),
            [](const Entry* a, const Entry* b) { return a->name < b->name; });
  for (std::size_t i = 1; i < by_name.size(); ++i) {
    if (by_name[i]->name == by_name[i - 1]->name) {
      fail(ErrorKind::InvalidArgument, kOp, what, " holds two members named '", by_name[i]->name,
           "'; the archive is damaged or crafted (numpy never writes that): rebuild it");
    }
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Entry* a, const Entry* b) { return a->local < b->local; });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    const Entry& a = *by_offset[i - 1];
    const Entry& b = *by_offset[i];
    if (b.local < a.data_at + a.compressed_size) {
      fail(ErrorKind::InvalidArgument, kOp, what, ": members '", a.name, "' and '", b.name,
           "' share bytes (offsets ", a.local, " and ", b.local,
           "); the archive is damaged or crafted to inflate one member many times: rebuild it");
    }
  }
}

}  // namespace

std::vector<Entry> list_members(std::span<const std::byte> archive, const std::string& what,
                                std::uint64_t max_total_bytes) {
  const Reader r(archive, what);
  // The end-of-central-directory record: the last signature within 64 KiB + 22 bytes.
  if (r.size() < 22) {
    fail(ErrorKind::InvalidArgument, kOp, what, " has ", r.size(),
         " bytes, too few for a zip archive; is it a .npz file?");
  }
  std::size_t end = r.size() - 22;
  const std::size_t lowest = r.size() > 22 + 65535 ? r.size() - 22 - 65535 : 0;
  while (r.u(end, 4) != kEndSig) {
    if (end == lowest) {
      fail(ErrorKind::InvalidArgument, kOp, what,
           " has no zip end record; it is not a .npz (zip) file or it is truncated");
    }
    --end;
  }
  std::uint64_t count = r.u(end + 10, 2), cd_offset = r.u(end + 16, 4);
  if ((count == 0xFFFF || cd_offset == 0xFFFFFFFF) && end >= 20 &&
      r.u(end - 20, 4) == kEnd64LocatorSig) {
    const std::uint64_t e64 = r.u(end - 20 + 8, 8);
    if (e64 > r.size() || r.u(static_cast<std::size_t>(e64), 4) != kEnd64Sig) {
      fail(ErrorKind::InvalidArgument, kOp, what, " has a broken zip64 end record");
    }
    count = r.u(static_cast<std::size_t>(e64) + 32, 8);
    cd_offset = r.u(static_cast<std::size_t>(e64) + 48, 8);
  }
  // Each record takes at least 46 bytes, so a count beyond that is caught as
  // a truncation before the vector grows far.
  std::vector<Entry> entries;
  std::uint64_t at = cd_offset;
  for (std::uint64_t m = 0; m < count; ++m) {
    if (at > r.size()) {
      fail(ErrorKind::InvalidArgument, kOp, what, ": central directory entry ", m,
           " lies past the end; the archive is damaged");
    }
    entries.push_back(read_entry(r, static_cast<std::size_t>(at), m, what, at));
  }
  check_disjoint(entries, what);
  std::uint64_t total = 0;  // saturating: a crafted record may claim 2^64 bytes
  for (const Entry& e : entries) {
    total = e.size > std::numeric_limits<std::uint64_t>::max() - total
                ? std::numeric_limits<std::uint64_t>::max()
                : total + e.size;
  }
  if (total > max_total_bytes) {
    fail(ErrorKind::OutOfMemory, kOp, what, " holds ", total, " bytes once inflated (",
         entries.size(), " members), more than the limit of ", max_total_bytes,
         " bytes (NpzLoadOptions::max_total_bytes, 4 GiB by default); nothing was inflated. "
         "If the archive is trusted and memory allows, raise max_total_bytes");
  }
  return entries;
}

MemberBytes read_member(std::span<const std::byte> archive, const Entry& e,
                        const std::string& what) {
  const Reader r(archive, what);
  const auto raw = r.range(e.data_at, e.compressed_size);
  MemberBytes out;
  if (e.method == 0) {
    out.bytes = raw;
  } else {
    try {
      // Uninitialised: pages are touched only as inflate writes them, so a
      // stream that fails early costs little memory.
      out.owned.reset(new std::byte[std::max<std::uint64_t>(e.size, 1)]);
    } catch (const std::bad_alloc&) {
      fail(ErrorKind::OutOfMemory, kOp, what, ": could not allocate ", e.size,
           " bytes to inflate member '", e.name, "'; free memory or load a smaller archive");
    }
    inflate_raw(raw, out.owned.get(), e.size, what, e.name);
    out.bytes = std::span<const std::byte>(out.owned.get(), static_cast<std::size_t>(e.size));
  }
  if (crc_of(out.bytes) != e.crc) {
    fail(ErrorKind::InvalidArgument, kOp, what, ": member '", e.name,
         "' fails its CRC-32 check; the archive is damaged");
  }
  return out;
}

namespace {

void put(std::vector<std::byte>& out, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
}

std::vector<std::byte> deflate_raw(std::span<const std::byte> in) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    fail(ErrorKind::Internal, "save_npz", "zlib deflateInit2 failed");
  }
  std::vector<std::byte> out(deflateBound(&zs, static_cast<uLong>(in.size())));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) fail(ErrorKind::Internal, "save_npz", "zlib deflate failed: ", rc);
  return out;
}

}  // namespace

std::vector<std::byte> write_archive(const std::vector<Member>& members, bool compressed) {
  // Plain (non-zip64) records: members and the archive stay below 4 GiB.
  std::vector<std::byte> out, central;
  constexpr std::uint64_t kMax = 0xFFFFFFFFu;
  for (const Member& m : members) {
    if (m.data.size() >= kMax || m.data.size() > std::numeric_limits<uInt>::max()) {
      fail(ErrorKind::Unsupported, "save_npz", "member '", m.name, "' has ", m.data.size(),
           " bytes; save_npz writes members below 4 GiB (use save_npy for larger arrays)");
    }
    const std::uint32_t crc = crc_of(m.data);
    const std::vector<std::byte> packed = compressed ? deflate_raw(m.data) : m.data;
    const std::uint64_t offset = out.size();
    const int method = compressed ? 8 : 0;
    put(out, kLocalSig, 4);
    put(out, 20, 2);  // version needed
    put(out, 0, 2);   // flags
    put(out, static_cast<std::uint64_t>(method), 2);
    put(out, 0, 2);     // time
    put(out, 0x21, 2);  // date: 1980-01-01
    put(out, crc, 4);
    put(out, packed.size(), 4);
    put(out, m.data.size(), 4);
    put(out, m.name.size(), 2);
    put(out, 0, 2);
    for (char c : m.name) out.push_back(static_cast<std::byte>(c));
    out.insert(out.end(), packed.begin(), packed.end());
    put(central, kCentralSig, 4);
    put(central, 20, 2);  // made by
    put(central, 20, 2);  // needed
    put(central, 0, 2);
    put(central, static_cast<std::uint64_t>(method), 2);
    put(central, 0, 2);
    put(central, 0x21, 2);
    put(central, crc, 4);
    put(central, packed.size(), 4);
    put(central, m.data.size(), 4);
    put(central, m.name.size(), 2);
    put(central, 0, 2);  // extra
    put(central, 0, 2);  // comment
    put(central, 0, 2);  // disk
    put(central, 0, 2);  // internal attributes
    put(central, 0, 4);  // external attributes
    put(central, offset, 4);
    for (char c : m.name) central.push_back(static_cast<std::byte>(c));
    if (out.size() >= kMax) {
      fail(ErrorKind::Unsupported, "save_npz",
           "the archive would exceed 4 GiB; save the arrays with save_npy instead");
    }
  }
  const std::uint64_t cd_offset = out.size();
  out.insert(out.end(), central.begin(), central.end());
  put(out, kEndSig, 4);
  put(out, 0, 2);
  put(out, 0, 2);
  put(out, members.size(), 2);
  put(out, members.size(), 2);
  put(out, central.size(), 4);
  put(out, cd_offset, 4);
  put(out, 0, 2);
  return out;
}

}  // namespace tenferro::io::zip
