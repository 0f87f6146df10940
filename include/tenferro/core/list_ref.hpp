#pragma once
// ListRef<T>: the parameter type of every function that takes a list of
// tensors. It is a std::span<const T> that also binds to braces, so each of
//   f({x, y});   f(std::vector<T>{...});   f(array);   f(span);
// works alike. Like a span it does not own the elements: a braced list lives
// until the end of the full expression of the call, so take ListRef only as a
// function parameter, never as a variable that outlives the call.

#include <cstddef>
#include <initializer_list>
#include <span>

namespace tenferro {

template <class T>
class ListRef : public std::span<const T> {
 public:
  using std::span<const T>::span;
  ListRef() = default;
  ListRef(std::span<const T> s) : std::span<const T>(s) {}  // NOLINT: implicit on purpose
  ListRef(std::initializer_list<T> list)                    // NOLINT: implicit on purpose
      : std::span<const T>(list.begin(), list.size()) {}
};

}  // namespace tenferro
