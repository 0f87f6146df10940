// The einsum mapping: torch.einsum's equation (over row-major shapes) onto
// tenferro::einsum (over our column-major shapes). A row-major operand loads
// with its axes reversed, so each term's labels are reversed (an ellipsis
// stays one group; its axes reverse with the operand). torch aligns ellipsis
// groups of different lengths at their row-major end, i.e. at the start of
// our reversed group, so a shorter group gets unit axes after it (our einsum
// broadcasts extent-1 labels).

#include <algorithm>
#include <stdexcept>

#include "ops.hpp"
#include "tenferro/einsum/einsum.hpp"

namespace replay {

using namespace tenferro;

namespace {

// A term as items: a label (one byte) or "..." .
std::vector<std::string> items_of(const std::string& term) {
  std::vector<std::string> items;
  for (std::size_t i = 0; i < term.size();) {
    if (term[i] == ' ') {
      ++i;
    } else if (term.compare(i, 3, "...") == 0) {
      items.emplace_back("...");
      i += 3;
    } else {
      items.emplace_back(1, term[i]);
      ++i;
    }
  }
  return items;
}

struct Mapped {
  std::string equation;              // ours
  std::vector<std::int64_t> pad_at;  // per operand: where unit axes go (-1: none)
  std::vector<std::int64_t> pad_count;
};

Mapped map_equation(const std::string& eq, const std::vector<std::int64_t>& ranks) {
  const auto arrow = eq.find("->");
  std::vector<std::vector<std::string>> terms;
  std::string lhs = eq.substr(0, arrow);
  for (std::size_t start = 0;;) {
    const auto comma = lhs.find(',', start);
    terms.push_back(items_of(lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ranks.size()) throw std::runtime_error("einsum: operand count mismatch");
  std::vector<std::string> out;
  if (arrow != std::string::npos) {
    out = items_of(eq.substr(arrow + 2));
  } else {  // torch's implicit output: "..." then the labels seen once, sorted
    std::string once;
    bool ell = false;
    for (const auto& t : terms) {
      for (const auto& it : t) {
        if (it == "...")
          ell = true;
        else
          once += it;
      }
    }
    if (ell) out.emplace_back("...");
    std::string sorted = once;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      if (std::count(once.begin(), once.end(), sorted[i]) == 1) out.emplace_back(1, sorted[i]);
    }
  }
  Mapped m;
  std::int64_t longest = 0;
  std::vector<std::int64_t> ell_len(terms.size(), -1);
  for (std::size_t k = 0; k < terms.size(); ++k) {
    const auto& t = terms[k];
    if (std::find(t.begin(), t.end(), "...") != t.end()) {
      ell_len[k] = ranks[k] - static_cast<std::int64_t>(t.size() - 1);
      longest = std::max(longest, ell_len[k]);
    }
  }
  auto reversed = [](std::vector<std::string> t) {
    std::reverse(t.begin(), t.end());
    std::string s;
    for (const auto& it : t) s += it;
    return s;
  };
  for (std::size_t k = 0; k < terms.size(); ++k) {
    if (k > 0) m.equation += ",";
    const std::string ours = reversed(terms[k]);
    m.equation += ours;
    m.pad_at.push_back(-1);
    m.pad_count.push_back(0);
    if (ell_len[k] >= 0 && ell_len[k] < longest) {
      // Our axes: the labels before "..." in the reversed term, then the group.
      const auto before = static_cast<std::int64_t>(ours.find("..."));
      m.pad_at.back() = before + ell_len[k];
      m.pad_count.back() = longest - ell_len[k];
    }
  }
  m.equation += "->" + reversed(out);
  return m;
}

}  // namespace

template <class T>
MultiFn<T> build_einsum(const Case& c) {
  if (c.op != "einsum") return {};
  const Json* eq = arg(c, "equation", 0);
  if (eq == nullptr || !eq->is_string()) throw std::runtime_error("einsum: no equation");
  const std::string equation = eq->get<std::string>();
  return [equation](std::span<const T> x) {
    std::vector<std::int64_t> ranks;
    for (const T& t : x) ranks.push_back(t.rank());
    const Mapped m = map_equation(equation, ranks);
    std::vector<T> ops;
    for (std::size_t k = 0; k < x.size(); ++k) {
      if (m.pad_at[k] < 0) {
        ops.push_back(x[k]);
        continue;
      }
      Shape s = concrete_shape(x[k]), padded;
      for (std::int64_t i = 0; i <= static_cast<std::int64_t>(s.size()); ++i) {
        if (i == m.pad_at[k]) {
          for (std::int64_t q = 0; q < m.pad_count[k]; ++q) padded.push_back(1);
        }
        if (i < static_cast<std::int64_t>(s.size()))
          padded.push_back(s[static_cast<std::size_t>(i)]);
      }
      ops.push_back(reshape_to(x[k], padded));
    }
    return std::vector<T>{einsum(m.equation, ops)};
  };
}

template MultiFn<EagerTensor> build_einsum<EagerTensor>(const Case&);
template MultiFn<TracedTensor> build_einsum<TracedTensor>(const Case&);

}  // namespace replay
