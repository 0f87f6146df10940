#pragma once
// A vector with N elements stored inline: shapes and strides of rank <= N never
// touch the heap.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <span>
#include <type_traits>
#include <vector>

namespace tenferro {

template <class T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable values");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;
  using size_type = std::size_t;

  SmallVector() noexcept {}  // user-provided: value-initialisation does not zero inline_
  explicit SmallVector(size_type n, T value = T{}) { assign(n, value); }
  SmallVector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }
  template <class It, class = std::enable_if_t<!std::is_integral_v<It>>>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(std::span<const T> s) { assign(s.begin(), s.end()); }  // NOLINT: implicit on purpose
  SmallVector(const std::vector<T>& v) {
    assign(v.begin(), v.end());
  }  // NOLINT: implicit on purpose
  template <std::size_t M>
  SmallVector(const T (&a)[M]) {  // NOLINT: implicit on purpose
    assign(a, a + M);
  }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { steal(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~SmallVector() { release(); }

  template <class It>
  void assign(It first, It last) {
    const auto n = static_cast<size_type>(std::distance(first, last));
    size_ = 0;
    reserve(n);
    std::copy(first, last, data_);
    size_ = n;
  }
  void assign(size_type n, T value) {
    size_ = 0;
    reserve(n);
    std::fill_n(data_, n, value);
    size_ = n;
  }

  size_type size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_type i) { return data_[i]; }
  const T& operator[](size_type i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  operator std::span<const T>() const { return {data_, size_}; }  // NOLINT
  std::span<const T> span() const { return {data_, size_}; }

  void reserve(size_type n) {
    if (n <= capacity_) return;
    T* fresh = new T[n];
    if (size_ > 0) std::memcpy(fresh, data_, size_ * sizeof(T));
    if (data_ != inline_) delete[] data_;
    data_ = fresh;
    capacity_ = n;
  }
  void resize(size_type n, T value = T{}) {
    reserve(n);
    if (n > size_) std::fill(data_ + size_, data_ + n, value);
    size_ = n;
  }
  void push_back(T v) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  T* insert(T* pos, T v) {
    const auto at = static_cast<size_type>(pos - data_);
    push_back(v);
    std::rotate(data_ + at, data_ + size_ - 1, data_ + size_);
    return data_ + at;
  }
  T* erase(T* pos) {
    std::copy(pos + 1, data_ + size_, pos);
    --size_;
    return pos;
  }

  // A plain loop: std::equal on arithmetic types becomes a memcmp call, whose
  // set-up costs more than the comparison of a few extents.
  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    if (a.size_ != b.size_) return false;
    for (size_type i = 0; i < a.size_; ++i)
      if (!(a.data_[i] == b.data_[i])) return false;
    return true;
  }
  /// True when the elements live in the inline buffer (no heap allocation).
  bool is_inline() const { return data_ == inline_; }

 private:
  void release() {
    if (data_ != inline_) delete[] data_;
    data_ = inline_;
    capacity_ = N;
    size_ = 0;
  }
  void steal(SmallVector& o) {
    if (o.data_ == o.inline_) {
      data_ = inline_;
      capacity_ = N;
      std::copy(o.inline_, o.inline_ + o.size_, inline_);
    } else {
      data_ = o.data_;
      capacity_ = o.capacity_;
      o.data_ = o.inline_;
      o.capacity_ = N;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  // Not zeroed: only [0, size_) is ever read, and every Shape and Strides of
  // every Tensor would otherwise clear 8 * N bytes on construction.
  T inline_[N];
  T* data_ = inline_;
  size_type size_ = 0;
  size_type capacity_ = N;
};

/// Extents of a tensor, leftmost fastest in memory for owned tensors.
using Shape = SmallVector<std::int64_t, 8>;
/// Element strides (any sign) of a view.
using Strides = SmallVector<std::int64_t, 8>;
/// A list of axes.
using Axes = SmallVector<std::int64_t, 8>;

}  // namespace tenferro
