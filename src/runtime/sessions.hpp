#pragma once
// Engine sessions (each backend's own, Backend::enter_session) and the erased
// execution context.

#include <memory>

#include "tenferro/runtime/runtime.hpp"

namespace tenferro::detail {

/// Enters a session on `engine`'s backend. With reuse, a session this thread
/// already holds on that backend is reused instead of being an error; without,
/// the session is the caller's (Runtime::enter_session) and holds_session
/// reports it while it lives.
std::unique_ptr<EngineSession> make_engine_session(std::shared_ptr<const EngineRegistration> engine,
                                                   std::uint64_t runtime_id, bool reuse);

/// Whether this thread holds a session it entered with Runtime::enter_session
/// on runtime `runtime_id`.
bool holds_session(std::uint64_t runtime_id);

class BasicExecutionContext final : public ExecutionContext {
 public:
  explicit BasicExecutionContext(const EngineRegistration& engine) : engine_(engine) {}
  Backend& backend() override { return engine_.backend(); }
  const EngineId& engine() const override { return engine_.id(); }

 private:
  const EngineRegistration& engine_;
};

}  // namespace tenferro::detail
