#include "tenferro/core/error.hpp"
#include "tenferro/core/report_as.hpp"

namespace tenferro {

std::string_view name(ErrorKind k) {
  switch (k) {
    case ErrorKind::InvalidArgument:
      return "InvalidArgument";
    case ErrorKind::DTypeMismatch:
      return "DTypeMismatch";
    case ErrorKind::ShapeMismatch:
      return "ShapeMismatch";
    case ErrorKind::RankMismatch:
      return "RankMismatch";
    case ErrorKind::AxisOutOfBounds:
      return "AxisOutOfBounds";
    case ErrorKind::DuplicateAxis:
      return "DuplicateAxis";
    case ErrorKind::ContextMismatch:
      return "ContextMismatch";
    case ErrorKind::RuntimeState:
      return "RuntimeState";
    case ErrorKind::Unsupported:
      return "Unsupported";
    case ErrorKind::UnsupportedAdRule:
      return "UnsupportedAdRule";
    case ErrorKind::MissingExtension:
      return "MissingExtension";
    case ErrorKind::NoInputIngress:
      return "NoInputIngress";
    case ErrorKind::ExtensionContract:
      return "ExtensionContract";
    case ErrorKind::OutOfMemory:
      return "OutOfMemory";
    case ErrorKind::Singular:
      return "Singular";
    case ErrorKind::NoConvergence:
      return "NoConvergence";
    case ErrorKind::GaugeIllDefined:
      return "GaugeIllDefined";
    case ErrorKind::Internal:
      return "Internal";
  }
  return "?";
}

std::string_view name(ErrorCategory c) {
  switch (c) {
    case ErrorCategory::Validation:
      return "Validation";
    case ErrorCategory::ContextMismatch:
      return "ContextMismatch";
    case ErrorCategory::RuntimeState:
      return "RuntimeState";
    case ErrorCategory::Unsupported:
      return "Unsupported";
    case ErrorCategory::UnsupportedAdRule:
      return "UnsupportedAdRule";
    case ErrorCategory::MissingExtension:
      return "MissingExtension";
    case ErrorCategory::NoInputIngress:
      return "NoInputIngress";
    case ErrorCategory::ExtensionContract:
      return "ExtensionContract";
    case ErrorCategory::Resource:
      return "Resource";
    case ErrorCategory::Numerical:
      return "Numerical";
    case ErrorCategory::Internal:
      return "Internal";
  }
  return "?";
}

std::string_view name(ErrorPhase p) {
  switch (p) {
    case ErrorPhase::Build:
      return "build";
    case ErrorPhase::Compile:
      return "compile";
    case ErrorPhase::Execute:
      return "execute";
  }
  return "?";
}

ErrorCategory category_of(ErrorKind k) {
  switch (k) {
    case ErrorKind::InvalidArgument:
    case ErrorKind::DTypeMismatch:
    case ErrorKind::ShapeMismatch:
    case ErrorKind::RankMismatch:
    case ErrorKind::AxisOutOfBounds:
    case ErrorKind::DuplicateAxis:
      return ErrorCategory::Validation;
    case ErrorKind::ContextMismatch:
      return ErrorCategory::ContextMismatch;
    case ErrorKind::RuntimeState:
      return ErrorCategory::RuntimeState;
    case ErrorKind::Unsupported:
      return ErrorCategory::Unsupported;
    case ErrorKind::UnsupportedAdRule:
      return ErrorCategory::UnsupportedAdRule;
    case ErrorKind::MissingExtension:
      return ErrorCategory::MissingExtension;
    case ErrorKind::NoInputIngress:
      return ErrorCategory::NoInputIngress;
    case ErrorKind::ExtensionContract:
      return ErrorCategory::ExtensionContract;
    case ErrorKind::OutOfMemory:
      return ErrorCategory::Resource;
    case ErrorKind::Singular:
    case ErrorKind::NoConvergence:
    case ErrorKind::GaugeIllDefined:
      return ErrorCategory::Numerical;
    case ErrorKind::Internal:
      return ErrorCategory::Internal;
  }
  return ErrorCategory::Internal;
}

Error::Error(ErrorKind kind, std::string op, std::string message, ErrorPhase phase,
             std::shared_ptr<const Error> cause)
    : kind_(kind),
      phase_(phase),
      op_(std::move(op)),
      message_(std::move(message)),
      cause_(std::move(cause)) {
  what_ = "[" + op_ + "] " + message_;
  for (const Error* c = cause_.get(); c != nullptr; c = c->cause_.get()) {
    what_ += "\n  caused by: [" + c->op_ + "] " + c->message_;
  }
}

std::string user_op_name(std::string_view op) {
  constexpr std::string_view kPrefix = "tenferro.";
  if (!op.starts_with(kPrefix)) return std::string(op);
  std::string_view s = op.substr(kPrefix.size());
  // A trailing ".v<digits>" is the family's version.
  if (const auto dot = s.rfind(".v"); dot != std::string_view::npos && dot + 2 < s.size() &&
                                      s.find_first_not_of("0123456789", dot + 2) == s.npos) {
    s = s.substr(0, dot);
  }
  if (s.starts_with("linalg_")) s.remove_prefix(7);
  return std::string(s);
}

void rethrow_with_context(const Error& cause, ErrorPhase phase, std::string op,
                          std::string message) {
  throw Error(cause.kind(), std::move(op), std::move(message), phase, cause.share());
}

}  // namespace tenferro
