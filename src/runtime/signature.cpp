#include "tenferro/runtime/signature.hpp"

#include <functional>

#include "tenferro/ops/op.hpp"

namespace tenferro {

std::string_view name(LayoutClass c) {
  switch (c) {
    case LayoutClass::Contiguous:
      return "contiguous";
    case LayoutClass::Strided:
      return "strided";
    case LayoutClass::Broadcast:
      return "broadcast";
  }
  return "?";
}

TensorSignature TensorSignature::of(const Tensor& t) {
  if (!t.defined()) fail(ErrorKind::InvalidArgument, "signature", "input tensor is undefined");
  TensorSignature s;
  s.dtype = t.dtype();
  s.shape = t.shape();
  s.placement = t.placement();
  s.strides = t.strides();
  if (t.is_contiguous()) {
    s.layout = LayoutClass::Contiguous;
  } else {
    s.layout = LayoutClass::Strided;
    for (std::size_t d = 0; d < s.shape.size(); ++d) {
      if (s.strides[d] == 0 && s.shape[d] > 1) s.layout = LayoutClass::Broadcast;
    }
  }
  const auto addr = reinterpret_cast<std::uintptr_t>(t.raw_data());
  std::uint8_t align = 64;
  while (align > 1 && addr % align != 0) align = static_cast<std::uint8_t>(align / 2);
  s.alignment = align;
  return s;
}

namespace {
std::size_t hash_entries(const std::vector<TensorSignature>& entries) {
  std::size_t h = entries.size();
  for (const auto& e : entries) {
    h = hash_combine(h, static_cast<std::size_t>(e.dtype));
    h = hash_combine(h, static_cast<std::size_t>(e.layout) * 31 + e.alignment);
    h = hash_combine(h, std::hash<std::string_view>{}(e.placement.device) * 131 +
                            static_cast<std::size_t>(e.placement.ordinal));
    for (auto x : e.shape) h = hash_combine(h, static_cast<std::size_t>(x));
    for (auto x : e.strides) h = hash_combine(h, static_cast<std::size_t>(x) * 7);
  }
  return h;
}
}  // namespace

InputSignature::InputSignature(std::vector<TensorSignature> entries)
    : entries_(std::move(entries)), hash_(hash_entries(entries_)) {}

InputSignature InputSignature::of(std::span<const Tensor> inputs) {
  std::vector<TensorSignature> entries;
  entries.reserve(inputs.size());
  for (const auto& t : inputs) entries.push_back(TensorSignature::of(t));
  return InputSignature(std::move(entries));
}

InputSignature InputSignature::masked(unsigned detail) const {
  std::vector<TensorSignature> out = entries_;
  for (auto& e : out) {
    if (!(detail & kDetailLayout)) e.layout = LayoutClass::Contiguous;
    if (!(detail & kDetailStrides)) e.strides.clear();
    if (!(detail & kDetailAlignment)) e.alignment = 64;
  }
  return InputSignature(std::move(out));
}

std::string InputSignature::to_string() const {
  std::string s = "(";
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (i) s += ", ";
    s += std::string(name(entries_[i].dtype)) + shape_to_string(entries_[i].shape);
  }
  return s + ")";
}

}  // namespace tenferro
