// einsum equations in string form: labels (ASCII letters, any UTF-8
// character), "...", ",", "->", spaces, and whatever else the bytes hold.
// Input: the equation, then optionally '\n' and bytes that choose the
// operand shapes. The shapes follow a lenient reading of the equation
// (one axis per label, a few per "..."), with occasional wrong ranks and
// extents, so both the checks and the contraction run; see einsum_check.hpp.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "einsum_check.hpp"
#include "fuzz_input.hpp"

namespace {

constexpr std::int64_t kEllipsis = -1;

// Label keys of each input term (a UTF-8 character's bytes as one key, or
// kEllipsis); stops at "->". Not the library's parser: only a guess at the
// ranks a valid reading would need.
std::vector<std::vector<std::int64_t>> guess_terms(std::string_view eq) {
  std::vector<std::vector<std::int64_t>> terms(1);
  for (std::size_t i = 0; i < eq.size();) {
    const auto c = static_cast<unsigned char>(eq[i]);
    if (c == ',') {
      terms.emplace_back();
      ++i;
    } else if (eq.substr(i, 2) == "->") {
      break;
    } else if (eq.substr(i, 3) == "...") {
      terms.back().push_back(kEllipsis);
      i += 3;
    } else if (c >= 0x80) {
      // Unsigned: a long run of continuation bytes wraps instead of overflowing.
      std::uint64_t key = c;
      ++i;
      while (i < eq.size() && (static_cast<unsigned char>(eq[i]) & 0xC0) == 0x80) {
        key = key * 256 + static_cast<unsigned char>(eq[i]);
        ++i;
      }
      // Keys stay apart from the ASCII letters and kEllipsis.
      terms.back().push_back(static_cast<std::int64_t>(key | (std::uint64_t{1} << 62)));
    } else {
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) terms.back().push_back(c);
      ++i;
    }
  }
  return terms;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = all.find('\n');
  const std::string_view eq = all.substr(0, nl);
  tenferro_fuzz::FuzzInput in(nl == std::string_view::npos ? nullptr : data + nl + 1,
                              nl == std::string_view::npos ? 0 : size - nl - 1);
  auto terms = guess_terms(eq);
  // More operands than this only exercise the count check: pass fewer.
  if (terms.size() > 24) terms.resize(24);
  tenferro_fuzz::ExtentBudget budget(4096);
  std::map<std::int64_t, std::int64_t> extent;
  std::vector<std::int64_t> ellipsis_extent;  // right-aligned: [0] is the last axis
  std::vector<tenferro::Shape> shapes;
  for (const auto& term : terms) {
    tenferro::Shape shape;
    for (std::int64_t key : term) {
      if (key == kEllipsis) {
        const int n = (in.byte() + 1) % 3;  // 1 axis when the bytes ran out
        tenferro::Shape group;
        for (int j = 0; j < n; ++j) {
          if (static_cast<std::size_t>(j) >= ellipsis_extent.size()) {
            ellipsis_extent.push_back(budget.draw(in));
          }
          group.push_back(in.range(0, 7) == 7 ? 1 : ellipsis_extent[static_cast<std::size_t>(j)]);
        }
        for (std::size_t j = group.size(); j-- > 0;) shape.push_back(group[j]);
        continue;
      }
      auto it = extent.find(key);
      if (it == extent.end()) it = extent.emplace(key, budget.draw(in)).first;
      // Now and then an extent that disagrees (ShapeMismatch, or a broadcast 1).
      shape.push_back(in.range(0, 31) == 31 ? in.range(0, 3) : it->second);
    }
    const int jitter = in.range(0, 31);
    if (jitter == 30) shape.push_back(1);  // a rank the term does not have
    if (jitter == 31 && !shape.empty()) shape.pop_back();
    shapes.push_back(shape);
  }
  tenferro_fuzz::check_einsum(eq, shapes, in);
  return 0;
}
