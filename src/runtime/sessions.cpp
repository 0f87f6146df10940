#include "runtime/sessions.hpp"

#include <algorithm>
#include <vector>

namespace tenferro::detail {

namespace {
// The runtimes of the sessions this thread's callers hold, one entry per
// session (sessions are released on the thread that entered them).
thread_local std::vector<std::uint64_t> t_held_sessions;

// An engine session is the backend's own session (Backend::enter_session)
// and the engine it was entered on: the runtime knows no backend's kind.
class BackendEngineSession final : public EngineSession {
 public:
  BackendEngineSession(std::shared_ptr<const EngineRegistration> engine, std::uint64_t runtime_id,
                       bool reuse)
      : engine_(std::move(engine)),
        runtime_id_(runtime_id),
        session_(engine_->backend().enter_session(reuse)),
        held_(!reuse) {
    if (held_) t_held_sessions.push_back(runtime_id_);
  }
  ~BackendEngineSession() override {
    if (!held_) return;
    auto it = std::find(t_held_sessions.rbegin(), t_held_sessions.rend(), runtime_id_);
    if (it != t_held_sessions.rend()) t_held_sessions.erase(std::next(it).base());
  }
  BackendEngineSession(const BackendEngineSession&) = delete;
  BackendEngineSession& operator=(const BackendEngineSession&) = delete;
  Backend& backend() override { return engine_->backend(); }
  const EngineId& engine() const override { return engine_->id(); }
  std::uint64_t runtime_id() const override { return runtime_id_; }

 private:
  // Owned: the session outlives any snapshot that was current when it began.
  std::shared_ptr<const EngineRegistration> engine_;
  std::uint64_t runtime_id_;
  std::unique_ptr<BackendSession> session_;
  bool held_;
};
}  // namespace

std::unique_ptr<EngineSession> make_engine_session(std::shared_ptr<const EngineRegistration> engine,
                                                   std::uint64_t runtime_id, bool reuse) {
  return std::make_unique<BackendEngineSession>(std::move(engine), runtime_id, reuse);
}

}  // namespace tenferro::detail

namespace tenferro::detail {

bool holds_session(std::uint64_t runtime_id) {
  return std::find(t_held_sessions.begin(), t_held_sessions.end(), runtime_id) !=
         t_held_sessions.end();
}

}  // namespace tenferro::detail
