// Parsing einsum equations (string and integer-label forms) and checking them
// against the operands' extents.

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "einsum/common.hpp"
#include "tenferro/core/error.hpp"

namespace tenferro::einsum_detail {
namespace {

constexpr const char* kOp = "einsum";
constexpr std::int64_t kEllipsis = -1;  // marker inside a parsed term

std::string utf8(std::int64_t cp) {
  std::string s;
  const auto c = static_cast<std::uint32_t>(cp);
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
  return s;
}

// One term: labels (code points) and kEllipsis markers, with the byte
// position of each item.
struct Term {
  std::vector<std::int64_t> items;
  std::vector<std::size_t> pos;
  std::size_t start = 0;
  std::string text;
  bool has_ellipsis() const {
    return std::find(items.begin(), items.end(), kEllipsis) != items.end();
  }
  std::int64_t explicit_count() const {
    return static_cast<std::int64_t>(items.size()) - (has_ellipsis() ? 1 : 0);
  }
};

std::string hex(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "%04X", v);
  return b;
}

// Decodes the UTF-8 character at eq[i] (a non-ASCII label); advances i.
std::int64_t decode_utf8(std::string_view eq, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(eq[i]);
  int len = 0;
  std::uint32_t cp = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07;
  } else {
    fail(ErrorKind::InvalidArgument, kOp, "invalid UTF-8 byte at position ", i, " of the equation");
  }
  if (i + static_cast<std::size_t>(len) > eq.size()) {
    fail(ErrorKind::InvalidArgument, kOp, "truncated UTF-8 character at position ", i,
         " of the equation");
  }
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(eq[i + static_cast<std::size_t>(k)]);
    if ((b & 0xC0) != 0x80) {
      fail(ErrorKind::InvalidArgument, kOp, "invalid UTF-8 byte at position ",
           i + static_cast<std::size_t>(k), " of the equation");
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  // Overlong forms (0xC1 0xA1 for 'a'), UTF-16 surrogates and code points
  // above U+10FFFF are not UTF-8 (RFC 3629).
  static constexpr std::uint32_t kShortest[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kShortest[len]) {
    fail(ErrorKind::InvalidArgument, kOp, "overlong UTF-8 encoding of U+", hex(cp), " at position ",
         i, " of the equation (not valid UTF-8)");
  }
  if (cp >= 0xD800 && cp <= 0xDFFF) {
    fail(ErrorKind::InvalidArgument, kOp, "UTF-16 surrogate U+", hex(cp), " at position ", i,
         " of the equation (not valid UTF-8)");
  }
  if (cp > 0x10FFFF) {
    fail(ErrorKind::InvalidArgument, kOp, "code point above U+10FFFF at position ", i,
         " of the equation (not valid UTF-8)");
  }
  i += static_cast<std::size_t>(len);
  return static_cast<std::int64_t>(cp);
}

// Parses eq[begin, end) as terms separated by ',' (one term when !allow_comma).
std::vector<Term> parse_terms(std::string_view eq, std::size_t begin, std::size_t end,
                              bool allow_comma) {
  std::vector<Term> terms(1);
  terms.back().start = begin;
  std::size_t i = begin;
  while (i < end) {
    const char ch = eq[i];
    Term& t = terms.back();
    if (ch == ' ') {
      ++i;
    } else if (ch == ',') {
      if (!allow_comma) {
        fail(ErrorKind::InvalidArgument, kOp, "',' at position ", i,
             " of the equation: the output after '->' is a single term");
      }
      terms.emplace_back();
      terms.back().start = i + 1;
      ++i;
    } else if (ch == '.') {
      if (eq.substr(i, 3) != "..." || i + 3 > end) {
        fail(ErrorKind::InvalidArgument, kOp, "'.' at position ", i,
             " of the equation is not part of an ellipsis '...'");
      }
      if (t.has_ellipsis()) {
        fail(ErrorKind::InvalidArgument, kOp, "a second ellipsis at position ", i,
             " of the equation; a term has at most one '...'");
      }
      t.items.push_back(kEllipsis);
      t.pos.push_back(i);
      t.text += "...";
      i += 3;
    } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
      t.items.push_back(static_cast<unsigned char>(ch));
      t.pos.push_back(i);
      t.text += ch;
      ++i;
    } else if (static_cast<unsigned char>(ch) >= 0x80) {
      const std::size_t p = i;
      t.items.push_back(decode_utf8(eq, i));
      t.pos.push_back(p);
      t.text += std::string(eq.substr(p, i - p));
    } else {
      fail(ErrorKind::InvalidArgument, kOp, "unexpected character '", std::string(1, ch),
           "' at position ", i,
           " of the equation; labels are letters, terms are separated by ',', "
           "'->' introduces the output and '...' stands for unlabelled axes");
    }
  }
  return terms;
}

void check_count(std::size_t terms, std::size_t operands) {
  if (operands == 0) {
    fail(ErrorKind::InvalidArgument, kOp, "einsum needs at least one operand");
  }
  if (terms != operands) {
    fail(ErrorKind::InvalidArgument, kOp, "the equation has ", terms, " input term(s) but ",
         operands, " operand(s) were given; pass one tensor per term");
  }
}

}  // namespace

std::string Spec::label_name(std::int64_t id) const {
  // Integer labels are any int64, negative ones included (negating INT64_MIN
  // for an "ellipsis axis" was undefined behaviour, found by fuzz_einsum_labels).
  // Labels past Unicode are the rules' fresh labels (op.cpp).
  if (!from_string || id > 0x10FFFF) return std::to_string(id);
  std::string s;
  if (id < 0) {
    s.append("ellipsis axis (").append(std::to_string(-id)).append(" from the end)");
  } else {
    s.append(1, '\'').append(utf8(id)).append(1, '\'');
  }
  return s;
}

Spec parse_equation(std::string_view eq, const std::vector<std::int64_t>& ranks) {
  const std::size_t arrow = eq.find("->");
  if (arrow != std::string_view::npos && eq.find("->", arrow + 2) != std::string_view::npos) {
    fail(ErrorKind::InvalidArgument, kOp, "a second '->' at position ", eq.find("->", arrow + 2),
         " of the equation");
  }
  for (std::size_t i = 0; i < eq.size(); ++i) {
    const bool in_arrow = arrow != std::string_view::npos && (i == arrow || i == arrow + 1);
    if ((eq[i] == '-' || eq[i] == '>') && !in_arrow) {
      fail(ErrorKind::InvalidArgument, kOp, "'", std::string(1, eq[i]), "' at position ", i,
           " of the equation is not part of '->'");
    }
  }
  const std::size_t lhs_end = arrow == std::string_view::npos ? eq.size() : arrow;
  const std::vector<Term> terms = parse_terms(eq, 0, lhs_end, true);
  check_count(terms.size(), ranks.size());

  Spec spec;
  spec.from_string = true;
  std::int64_t ell = 0;  // the longest ellipsis
  for (std::size_t k = 0; k < terms.size(); ++k) {
    const Term& t = terms[k];
    const std::int64_t n = t.explicit_count(), r = ranks[k];
    if (t.has_ellipsis() ? n > r : n != r) {
      fail(ErrorKind::RankMismatch, kOp, "term ", k, " '", t.text, "' (position ", t.start,
           ") has ", n, " label(s)", t.has_ellipsis() ? " besides '...'" : "", " but operand ", k,
           " has rank ", r, "; give one label per axis");
    }
    if (t.has_ellipsis()) ell = std::max(ell, r - n);
  }
  std::map<std::int64_t, int> count;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    const Term& t = terms[k];
    const std::int64_t e = ranks[k] - t.explicit_count();
    std::vector<std::int64_t> labels;
    for (std::int64_t item : t.items) {
      if (item == kEllipsis) {
        for (std::int64_t q = 0; q < e; ++q) labels.push_back(-(e - q));
      } else {
        labels.push_back(item);
        ++count[item];
      }
    }
    spec.inputs.push_back(std::move(labels));
  }
  auto push_ellipsis = [&] {
    for (std::int64_t q = 0; q < ell; ++q) spec.output.push_back(-(ell - q));
  };
  if (arrow == std::string_view::npos) {
    for (const auto& [id, c] : count) {
      if (c == 1) spec.output.push_back(id);
    }
    push_ellipsis();
    return spec;
  }
  const Term out = parse_terms(eq, arrow + 2, eq.size(), false).front();
  for (std::size_t i = 0; i < out.items.size(); ++i) {
    if (out.items[i] == kEllipsis) {
      push_ellipsis();
    } else if (count.count(out.items[i]) == 0) {
      fail(ErrorKind::InvalidArgument, kOp, "output label '", utf8(out.items[i]), "' at position ",
           out.pos[i], " of the equation appears in no input term");
    } else {
      spec.output.push_back(out.items[i]);
    }
  }
  return spec;
}

Spec parse_labels(const EinsumLabels& labels, const std::vector<std::int64_t>& ranks) {
  check_count(labels.inputs.size(), ranks.size());
  Spec spec;
  spec.inputs = labels.inputs;
  std::map<std::int64_t, int> count;
  for (std::size_t k = 0; k < labels.inputs.size(); ++k) {
    const auto n = static_cast<std::int64_t>(labels.inputs[k].size());
    if (n != ranks[k]) {
      fail(ErrorKind::RankMismatch, kOp, "operand ", k, " has ", n, " label(s) but rank ", ranks[k],
           "; give one label per axis");
    }
    for (std::int64_t l : labels.inputs[k]) ++count[l];
  }
  if (labels.output) {
    for (std::size_t i = 0; i < labels.output->size(); ++i) {
      const std::int64_t l = (*labels.output)[i];
      if (count.count(l) == 0) {
        fail(ErrorKind::InvalidArgument, kOp, "output label ", l, " (output position ", i,
             ") appears in no operand's labels");
      }
    }
    spec.output = *labels.output;
  } else {
    for (const auto& [id, c] : count) {
      if (c == 1) spec.output.push_back(id);
    }
  }
  return spec;
}

std::int64_t Analysis::dense(std::int64_t id) const {
  return std::lower_bound(ids.begin(), ids.end(), id) - ids.begin();
}

Analysis analyse(const Spec& spec, const std::vector<Dims>& dims, const char* op) {
  Analysis a;
  std::set<std::int64_t> all;
  for (const auto& in : spec.inputs) all.insert(in.begin(), in.end());
  a.ids.assign(all.begin(), all.end());
  const std::size_t L = a.ids.size();
  a.extent.assign(L, std::optional<std::int64_t>(1));
  std::vector<int> where(L, -1);  // the operand that set a non-1 extent
  std::vector<bool> symbolic(L, false);
  // Shapes given to einsum_path and EinsumPlan::prepare are not tensors':
  // the same rules (extents >= 0, at most 2^59 elements per operand).
  for (std::size_t k = 0; k < dims.size(); ++k) {
    double count = 1;
    for (std::size_t i = 0; i < dims[k].size(); ++i) {
      if (!dims[k][i]) continue;
      if (*dims[k][i] < 0) {
        fail(ErrorKind::InvalidArgument, op, "operand ", k, " has the negative extent ",
             *dims[k][i], " at axis ", i, "; extents are 0 or more");
      }
      count *= static_cast<double>(*dims[k][i]);
    }
    if (count > static_cast<double>(kMaxElements)) {
      fail(ErrorKind::InvalidArgument, op, "operand ", k, " has ", count,
           " elements, more than 2^59 (the most a tensor may have); check the extents");
    }
  }
  for (std::size_t k = 0; k < spec.inputs.size(); ++k) {
    const auto& labels = spec.inputs[k];
    for (std::size_t i = 0; i < labels.size(); ++i) {
      const std::int64_t d = a.dense(labels[i]);
      const auto& e = dims[k][i];
      for (std::size_t j = 0; j < i; ++j) {  // repeated within the operand: equal
        if (labels[j] == labels[i] && e && dims[k][j] && *e != *dims[k][j]) {
          fail(ErrorKind::ShapeMismatch, op, "label ", spec.label_name(labels[i]),
               " is repeated in operand ", k, " with extents ", *dims[k][j], " (axis ", j, ") and ",
               *e, " (axis ", i, "); a diagonal needs equal extents");
        }
      }
      if (!e) {
        symbolic[static_cast<std::size_t>(d)] = true;
        continue;
      }
      if (*e == 1) continue;
      auto& g = a.extent[static_cast<std::size_t>(d)];
      if (where[static_cast<std::size_t>(d)] < 0) {
        g = *e;
        where[static_cast<std::size_t>(d)] = static_cast<int>(k);
      } else if (*g != *e) {
        fail(ErrorKind::ShapeMismatch, op, "label ", spec.label_name(labels[i]), " has extent ", *g,
             " in operand ", where[static_cast<std::size_t>(d)], " but extent ", *e, " in operand ",
             k, "; the extents of a label must agree (or be 1 to broadcast)");
      }
    }
  }
  for (std::size_t d = 0; d < L; ++d) {
    if (symbolic[d] && where[d] < 0) a.extent[d] = std::nullopt;
  }
  std::vector<bool> in_output(L, false);
  for (std::int64_t id : spec.output) {
    const auto d = a.dense(id);
    if (!in_output[static_cast<std::size_t>(d)]) a.output_distinct.push_back(d);
    in_output[static_cast<std::size_t>(d)] = true;
  }
  // Diagonals, then broadcasting drops.
  std::vector<std::vector<bool>> keep(spec.inputs.size());
  std::vector<int> count(L, 0);
  for (std::size_t k = 0; k < spec.inputs.size(); ++k) {
    std::vector<std::int64_t> labels = spec.inputs[k];
    Dims ext = dims[k];
    for (bool again = true; again;) {
      again = false;
      for (std::size_t i = 0; i < labels.size() && !again; ++i) {
        for (std::size_t j = i + 1; j < labels.size() && !again; ++j) {
          if (labels[i] != labels[j]) continue;
          std::vector<std::int64_t> next{labels[i]};
          Dims next_ext{ext[i]};
          for (std::size_t q = 0; q < labels.size(); ++q) {
            if (q != i && q != j) next.push_back(labels[q]), next_ext.push_back(ext[q]);
          }
          labels = std::move(next), ext = std::move(next_ext);
          again = true;
        }
      }
    }
    keep[k].assign(labels.size(), true);
    for (std::size_t i = 0; i < labels.size(); ++i) {
      const auto d = static_cast<std::size_t>(a.dense(labels[i]));
      if (ext[i] && *ext[i] == 1 && a.extent[d] != std::optional<std::int64_t>(1)) {
        keep[k][i] = false;
      } else {
        ++count[d];
      }
    }
    a.diag_labels.push_back(std::move(labels));
  }
  for (std::size_t k = 0; k < spec.inputs.size(); ++k) {
    std::vector<std::int64_t> summed, reduced;
    const auto& labels = a.diag_labels[k];
    for (std::size_t i = 0; i < labels.size(); ++i) {
      const auto d = a.dense(labels[i]);
      const auto du = static_cast<std::size_t>(d);
      if (!keep[k][i] || (count[du] == 1 && !in_output[du])) {
        summed.push_back(static_cast<std::int64_t>(i));
      } else {
        reduced.push_back(d);
      }
    }
    a.summed_axes.push_back(std::move(summed));
    a.reduced.push_back(std::move(reduced));
  }
  return a;
}

std::vector<double> planning_extents(const Analysis& a) {
  std::vector<double> e;
  for (const auto& x : a.extent) e.push_back(x ? static_cast<double>(*x) : 2.0);
  return e;
}

}  // namespace tenferro::einsum_detail
