// .npy and .npz reading and writing (format of numpy/lib/format.py, described
// in NumPy's NEP 1): a magic string, a version, a Python-literal header dict
// {'descr': ..., 'fortran_order': ..., 'shape': (...)} and the raw data.

#include "tenferro/io/npy.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <new>
#include <optional>

#include "io/file.hpp"
#include "io/zip.hpp"
#include "tenferro/core/error.hpp"

namespace tenferro::io {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;

struct Descr {
  DType dtype;
  bool swap;  // the file's byte order differs from this machine's
};

// '<f8' -> f64, ...; '|' marks one-byte types, '=' the native order.
Descr parse_descr(const std::string& d, const std::string& op, const std::string& what) {
  auto unsupported = [&](const char* why) {
    fail(ErrorKind::Unsupported, op, what, " has dtype '", d, "' (", why,
         "); tenferro reads bool '|b1', '<i4', '<i8', '<f4', '<f8', '<c8', '<c16' (either byte "
         "order): convert with numpy's astype first");
  };
  if (d.size() < 3) unsupported("not a plain numeric dtype");
  const char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    unsupported("unknown byte-order mark");
  }
  const std::string code = d.substr(1);
  std::optional<DType> t;
  if (code == "b1") t = DType::Bool;
  if (code == "i4") t = DType::I32;
  if (code == "i8") t = DType::I64;
  if (code == "f4") t = DType::F32;
  if (code == "f8") t = DType::F64;
  if (code == "c8") t = DType::C64;
  if (code == "c16") t = DType::C128;
  if (!t) {
    if (code[0] == 'O') unsupported("an object array holds Python objects");
    if (code == "f2") unsupported("float16 has no tenferro dtype");
    unsupported("no tenferro dtype corresponds to it");
  }
  const bool little_native = std::endian::native == std::endian::little;
  const bool file_little = order == '<' || (order != '>' && little_native);
  return {*t, itemsize(*t) > 1 && file_little != little_native};
}

const char* descr_of(DType t) {
  const bool little = std::endian::native == std::endian::little;
  switch (t) {
    case DType::Bool:
      return "|b1";
    case DType::I32:
      return little ? "<i4" : ">i4";
    case DType::I64:
      return little ? "<i8" : ">i8";
    case DType::F32:
      return little ? "<f4" : ">f4";
    case DType::F64:
      return little ? "<f8" : ">f8";
    case DType::C64:
      return little ? "<c8" : ">c8";
    case DType::C128:
      return little ? "<c16" : ">c16";
  }
  return "?";
}

// A cursor over the header dict's Python literal.
class HeaderParser {
 public:
  HeaderParser(std::string text, const std::string& op, const std::string& what)
      : s_(std::move(text)), op_(op), what_(what) {}

  [[noreturn]] void bad(const std::string& why) const {
    fail(ErrorKind::InvalidArgument, op_, what_, " has a malformed .npy header (", why,
         "): expected {'descr': ..., 'fortran_order': ..., 'shape': (...)}, got \"", s_, "\"");
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) bad(std::string("expected '") + c + "'");
  }
  std::string string_literal() {
    skip();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) bad("expected a string");
    const char q = s_[i_++];
    const std::size_t end = s_.find(q, i_);
    if (end == std::string::npos) bad("unterminated string");
    std::string out = s_.substr(i_, end - i_);
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    skip();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      const std::size_t n = std::strlen(word);
      if (s_.compare(i_, n, word) == 0) {
        i_ += n;
        return value;
      }
    }
    bad("fortran_order must be True or False");
  }
  Shape tuple() {
    expect('(');
    Shape out;
    while (!eat(')')) {
      skip();
      std::size_t j = i_;
      while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) ++j;
      if (j == i_) bad("shape entries must be non-negative integers");
      if (j - i_ > 18) bad("a shape entry is too large");
      out.push_back(std::stoll(s_.substr(i_, j - i_)));
      i_ = j;
      // NumPy writes "3L" on Python 2.
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;
      if (!eat(',')) {
        expect(')');
        break;
      }
    }
    return out;
  }
  bool at_list() {
    skip();
    return i_ < s_.size() && s_[i_] == '[';
  }

 private:
  std::string s_;
  std::size_t i_ = 0;
  const std::string& op_;
  const std::string& what_;
};

struct Header {
  Descr descr;
  bool fortran = false;
  Shape shape;
};

Header parse_header(const std::string& text, const std::string& op, const std::string& what) {
  HeaderParser p(text, op, what);
  p.expect('{');
  std::optional<Descr> descr;
  std::optional<bool> fortran;
  std::optional<Shape> shape;
  while (!p.eat('}')) {
    const std::string key = p.string_literal();
    p.expect(':');
    if (key == "descr") {
      if (p.at_list()) {
        fail(ErrorKind::Unsupported, op, what,
             " holds a structured array (its descr is a list of fields); save each field as its "
             "own array");
      }
      descr = parse_descr(p.string_literal(), op, what);
    } else if (key == "fortran_order") {
      fortran = p.boolean();
    } else if (key == "shape") {
      shape = p.tuple();
    } else {
      p.bad("unknown key '" + key + "'");
    }
    if (!p.eat(',')) {
      p.expect('}');
      break;
    }
  }
  if (!descr || !fortran || !shape) p.bad("a key is missing");
  return {*descr, *fortran, *shape};
}

std::uint64_t read_le(std::span<const std::byte> b, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(b[at + i]);
  return v;
}

void swap_bytes(std::byte* data, std::int64_t count, std::size_t width) {
  for (std::int64_t i = 0; i < count; ++i) std::reverse(data + i * width, data + (i + 1) * width);
}

Tensor parse_npy(std::span<const std::byte> b, const std::string& what, const std::string& op) {
  if (b.size() < kMagicLen + 2 || std::memcmp(b.data(), kMagic, kMagicLen) != 0) {
    fail(ErrorKind::InvalidArgument, op, what,
         " does not start with the .npy magic \"\\x93NUMPY\"; it is not a .npy file");
  }
  const int major = std::to_integer<int>(b[6]);
  if (major < 1 || major > 3) {
    fail(ErrorKind::Unsupported, op, what, " has .npy format version ", major, ".",
         std::to_integer<int>(b[7]), "; tenferro reads versions 1.0, 2.0 and 3.0");
  }
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (b.size() < kMagicLen + 2 + len_bytes) {
    fail(ErrorKind::InvalidArgument, op, what, " is truncated inside its .npy preamble");
  }
  const std::uint64_t header_len = read_le(b, 8, static_cast<int>(len_bytes));
  const std::size_t data_at = 8 + len_bytes + static_cast<std::size_t>(header_len);
  if (header_len > b.size() || data_at > b.size()) {
    fail(ErrorKind::InvalidArgument, op, what, " is truncated: its header claims ", header_len,
         " bytes but the file has ", b.size());
  }
  const std::string text(reinterpret_cast<const char*>(b.data()) + 8 + len_bytes,
                         static_cast<std::size_t>(header_len));
  const Header h = parse_header(text, op, what);
  const std::int64_t numel = shape_numel(h.shape, op.c_str());
  const std::size_t width = itemsize(h.descr.dtype);
  const std::uint64_t have = b.size() - data_at;
  if (static_cast<std::uint64_t>(numel) > have / width) {
    fail(ErrorKind::InvalidArgument, op, what, " is truncated: shape ", shape_to_string(h.shape),
         " of ", name(h.descr.dtype), " needs ", numel, " x ", width,
         " data bytes but the file holds ", have);
  }
  const std::uint64_t want = static_cast<std::uint64_t>(numel) * width;
  if (have != want) {
    fail(ErrorKind::InvalidArgument, op, what, (have < want ? " is truncated" : " is too long"),
         ": shape ", shape_to_string(h.shape), " of ", name(h.descr.dtype), " needs ", want,
         " data bytes but the file holds ", have);
  }
  // C order: the data are our column-major tensor of the reversed shape.
  Shape storage_shape = h.shape;
  if (!h.fortran) std::reverse(storage_shape.begin(), storage_shape.end());
  Tensor t = empty(storage_shape, h.descr.dtype);
  auto* dst = static_cast<std::byte*>(t.raw_data());
  if (want > 0) std::memcpy(dst, b.data() + data_at, static_cast<std::size_t>(want));
  if (h.descr.swap) {
    // A complex number is two reals, swapped separately.
    const std::size_t part = is_complex(h.descr.dtype) ? width / 2 : width;
    swap_bytes(dst, numel * static_cast<std::int64_t>(width / part), part);
  }
  if (h.descr.dtype == DType::Bool) {
    for (std::int64_t i = 0; i < numel; ++i) {
      dst[i] = static_cast<std::byte>(dst[i] != std::byte{0});
    }
  }
  if (h.fortran || t.rank() < 2) return t;
  Axes perm;
  for (std::int64_t d = t.rank() - 1; d >= 0; --d) perm.push_back(d);
  return t.permute(perm).contiguous();
}

// Runs `body`, turning an allocation failure of a byte buffer or a string
// into OutOfMemory (tensor storage reports its own).
template <class F>
auto memory_checked(const char* op, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    fail(ErrorKind::OutOfMemory, op,
         "ran out of memory for the file's bytes; free memory or use smaller arrays");
  }
}

std::vector<std::byte> npy_bytes(const Tensor& x, NpyOrder order, const char* op) {
  if (!x.defined()) fail(ErrorKind::InvalidArgument, op, "the tensor is undefined");
  // C order: the row-major layout of x is the column-major layout of x with
  // its axes reversed.
  const bool c_order = order == NpyOrder::C;
  Tensor c = x;
  if (c_order && x.rank() >= 2) {
    Axes perm;
    for (std::int64_t d = x.rank() - 1; d >= 0; --d) perm.push_back(d);
    c = x.permute(perm);
  }
  if (!c.is_contiguous()) c = c.contiguous();
  const Shape& shape = x.shape();
  std::string shape_text = "(";
  for (std::size_t d = 0; d < shape.size(); ++d) {
    shape_text += std::to_string(shape[d]);
    if (d + 1 < shape.size() || shape.size() == 1) shape_text += ",";
    if (d + 1 < shape.size()) shape_text += " ";
  }
  shape_text += ")";
  std::string header = std::string("{'descr': '") + descr_of(c.dtype()) +
                       "', 'fortran_order': " + (c_order ? "False" : "True") +
                       ", 'shape': " + shape_text + ", }";
  // Pad with spaces so the data start at a multiple of 64 bytes, ending in
  // '\n'; version 2.0 (a 4-byte length) only when the header needs it.
  bool v2 = false;
  for (std::size_t preamble : {std::size_t{10}, std::size_t{12}}) {
    v2 = preamble == 12;
    const std::size_t total = preamble + header.size() + 1;
    if (header.size() + 1 + (64 - total % 64) % 64 <= 65535 || v2) {
      header.append((64 - total % 64) % 64, ' ');
      break;
    }
  }
  header += '\n';
  const std::size_t len_bytes = v2 ? 4 : 2;
  const auto data_bytes = static_cast<std::size_t>(c.numel()) * itemsize(c.dtype());
  std::vector<std::byte> out;
  out.reserve(kMagicLen + 2 + len_bytes + header.size() + data_bytes);
  for (std::size_t i = 0; i < kMagicLen; ++i) out.push_back(static_cast<std::byte>(kMagic[i]));
  out.push_back(std::byte{static_cast<unsigned char>(v2 ? 2 : 1)});
  out.push_back(std::byte{0});
  for (std::size_t i = 0; i < len_bytes; ++i) {
    out.push_back(static_cast<std::byte>((header.size() >> (8 * i)) & 0xFF));
  }
  for (char ch : header) out.push_back(static_cast<std::byte>(ch));
  const auto* data = static_cast<const std::byte*>(c.raw_data());
  out.insert(out.end(), data, data + data_bytes);
  return out;
}

std::vector<std::byte> npz_bytes(const std::map<std::string, Tensor>& arrays, bool compressed,
                                 NpyOrder order) {
  std::vector<zip::Member> members;
  for (const auto& [key, t] : arrays) {
    if (key.empty() || key.find('/') != std::string::npos) {
      fail(ErrorKind::InvalidArgument, "save_npz", "key '", key,
           "' is not a valid member name; use a non-empty name without '/'");
    }
    if (!t.defined())
      fail(ErrorKind::InvalidArgument, "save_npz", "array '", key, "' is undefined");
    members.push_back({key + ".npy", npy_bytes(t, order, "save_npz")});
  }
  if (members.size() >= 0xFFFF) {
    fail(ErrorKind::Unsupported, "save_npz", arrays.size(),
         " arrays exceed the 65534 members save_npz writes; split them over several files");
  }
  return zip::write_archive(members, compressed);
}

std::map<std::string, Tensor> npz_arrays(std::span<const std::byte> bytes, const std::string& what,
                                         const NpzLoadOptions& options) {
  std::map<std::string, Tensor> out;
  // One member inflated at a time, its buffer dropped once parsed.
  for (const zip::Entry& e : zip::list_members(bytes, what, options.max_total_bytes)) {
    std::string key = e.name;
    if (key.size() > 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    if (out.count(key) != 0) {
      fail(ErrorKind::InvalidArgument, "load_npz", what, " holds two members that load as key '",
           key, "' (one of them '", e.name, "'); rename one of them in the archive");
    }
    const zip::MemberBytes m = zip::read_member(bytes, e, what);
    out[key] = parse_npy(m.bytes, what + " member '" + e.name + "'", "load_npz");
  }
  return out;
}

}  // namespace

std::vector<std::byte> to_npy_bytes(const Tensor& x, NpyOrder order) {
  return memory_checked("save_npy", [&] { return npy_bytes(x, order, "save_npy"); });
}

Tensor from_npy_bytes(std::span<const std::byte> bytes, const std::string& what) {
  return memory_checked("load_npy", [&] { return parse_npy(bytes, what, "load_npy"); });
}

void save_npy(const std::filesystem::path& path, const Tensor& x, NpyOrder order) {
  memory_checked("save_npy",
                 [&] { file::write(path, npy_bytes(x, order, "save_npy"), "save_npy"); });
}

Tensor load_npy(const std::filesystem::path& path) {
  return memory_checked("load_npy", [&] {
    return parse_npy(file::read(path, "load_npy"), file::quoted(path), "load_npy");
  });
}

std::vector<std::byte> to_npz_bytes(const std::map<std::string, Tensor>& arrays, bool compressed,
                                    NpyOrder order) {
  return memory_checked("save_npz", [&] { return npz_bytes(arrays, compressed, order); });
}

std::map<std::string, Tensor> from_npz_bytes(std::span<const std::byte> bytes,
                                             const std::string& what,
                                             const NpzLoadOptions& options) {
  return memory_checked("load_npz", [&] { return npz_arrays(bytes, what, options); });
}

void save_npz(const std::filesystem::path& path, const std::map<std::string, Tensor>& arrays,
              bool compressed, NpyOrder order) {
  memory_checked("save_npz",
                 [&] { file::write(path, npz_bytes(arrays, compressed, order), "save_npz"); });
}

std::map<std::string, Tensor> load_npz(const std::filesystem::path& path,
                                       const NpzLoadOptions& options) {
  return memory_checked("load_npz", [&] {
    return npz_arrays(file::read(path, "load_npz"), file::quoted(path), options);
  });
}

}  // namespace tenferro::io
