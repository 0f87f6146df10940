#pragma once
// The one exception hierarchy of tenferro. Callers branch on kind(), never on
// message text. Messages read "[op] what went wrong; what to do".

#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

namespace tenferro {

enum class ErrorKind {
  // Validation
  InvalidArgument,
  DTypeMismatch,
  ShapeMismatch,
  RankMismatch,
  AxisOutOfBounds,
  DuplicateAxis,
  // Context and state
  ContextMismatch,
  RuntimeState,
  Unsupported,
  UnsupportedAdRule,
  MissingExtension,
  NoInputIngress,
  /// An extension's engine broke its contract with the runtime (an executor
  /// returned the wrong number of outputs, or outputs whose dtype or shape
  /// differ from what the family's infer() declares): a bug in that extension.
  ExtensionContract,
  /// An allocation failed; the message names the bytes and the operation.
  /// Nothing was changed: the runtime stays usable.
  OutOfMemory,
  // Numerical
  Singular,
  NoConvergence,
  GaugeIllDefined,
  Internal,
};

enum class ErrorCategory {
  Validation,
  ContextMismatch,
  RuntimeState,
  Unsupported,
  UnsupportedAdRule,
  MissingExtension,
  NoInputIngress,
  ExtensionContract,
  Resource,
  Numerical,
  Internal,
};

enum class ErrorPhase { Build, Compile, Execute };

std::string_view name(ErrorKind k);
std::string_view name(ErrorCategory c);
std::string_view name(ErrorPhase p);
ErrorCategory category_of(ErrorKind k);

class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string op, std::string message, ErrorPhase phase = ErrorPhase::Build,
        std::shared_ptr<const Error> cause = nullptr);
  Error(const Error&) = default;
  Error& operator=(const Error&) = default;
  ~Error() override = default;

  ErrorKind kind() const noexcept { return kind_; }
  ErrorCategory category() const noexcept { return category_of(kind_); }
  ErrorPhase phase() const noexcept { return phase_; }
  /// The operation or family the error is about, e.g. "add" or "mylib.scale.v1".
  const std::string& op() const noexcept { return op_; }
  /// The message without the "[op] " prefix.
  const std::string& message() const noexcept { return message_; }
  /// "[op] message", followed by "caused by: ..." lines for the cause chain.
  const char* what() const noexcept override { return what_.c_str(); }
  /// The underlying error, or nullptr.
  const Error* cause() const noexcept { return cause_.get(); }
  std::shared_ptr<const Error> cause_ptr() const noexcept { return cause_; }

  /// A copy of this error (as a shared cause) for wrapping in another error;
  /// derived errors override it so their fields survive in the cause chain.
  virtual std::shared_ptr<const Error> share() const {
    return std::make_shared<const Error>(*this);
  }

 private:
  ErrorKind kind_;
  ErrorPhase phase_;
  std::string op_;
  std::string message_;
  std::shared_ptr<const Error> cause_;
  std::string what_;
};

namespace detail {
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

/// Throws an Error of `kind` for `op` with the concatenated message pieces.
template <class... Args>
[[noreturn]] void fail(ErrorKind kind, std::string op, const Args&... pieces) {
  throw Error(kind, std::move(op), detail::cat(pieces...));
}

/// fail() with an explicit phase.
template <class... Args>
[[noreturn]] void fail_in(ErrorPhase phase, ErrorKind kind, std::string op, const Args&... pieces) {
  throw Error(kind, std::move(op), detail::cat(pieces...), phase);
}

/// Rethrows `cause` as an error of the same kind about `op` in `phase`, with
/// `cause` kept as the typed cause (used where a layer adds context).
[[noreturn]] void rethrow_with_context(const Error& cause, ErrorPhase phase, std::string op,
                                       std::string message);

}  // namespace tenferro
