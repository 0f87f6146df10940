#include "runtime/sessions.hpp"

namespace tenferro::detail {

namespace {
// An engine session is the backend's own session (Backend::enter_session)
// and the engine it was entered on: the runtime knows no backend's kind.
class BackendEngineSession final : public EngineSession {
 public:
  BackendEngineSession(std::shared_ptr<const EngineRegistration> engine, std::uint64_t runtime_id,
                       bool reuse)
      : engine_(std::move(engine)),
        runtime_id_(runtime_id),
        session_(engine_->backend().enter_session(reuse)) {}
  Backend& backend() override { return engine_->backend(); }
  const EngineId& engine() const override { return engine_->id(); }
  std::uint64_t runtime_id() const override { return runtime_id_; }

 private:
  // Owned: the session outlives any snapshot that was current when it began.
  std::shared_ptr<const EngineRegistration> engine_;
  std::uint64_t runtime_id_;
  std::unique_ptr<BackendSession> session_;
};
}  // namespace

std::unique_ptr<EngineSession> make_engine_session(std::shared_ptr<const EngineRegistration> engine,
                                                   std::uint64_t runtime_id, bool reuse) {
  return std::make_unique<BackendEngineSession>(std::move(engine), runtime_id, reuse);
}

}  // namespace tenferro::detail
