#include "runtime/sessions.hpp"

namespace tenferro::detail {

namespace {
class CpuEngineSession final : public EngineSession {
 public:
  CpuEngineSession(std::shared_ptr<const EngineRegistration> engine, std::uint64_t runtime_id,
                   bool reuse)
      : engine_(std::move(engine)), runtime_id_(runtime_id) {
    auto& cpu = static_cast<CpuBackend&>(engine_->backend());
    if (!reuse || CpuSession::current(cpu) == nullptr) session_ = std::make_unique<CpuSession>(cpu);
  }
  Backend& backend() override { return engine_->backend(); }
  const EngineId& engine() const override { return engine_->id(); }
  std::uint64_t runtime_id() const override { return runtime_id_; }

 private:
  // Owned: the session outlives any snapshot that was current when it began.
  std::shared_ptr<const EngineRegistration> engine_;
  std::uint64_t runtime_id_;
  std::unique_ptr<CpuSession> session_;
};
}  // namespace

std::unique_ptr<EngineSession> make_engine_session(std::shared_ptr<const EngineRegistration> engine,
                                                   std::uint64_t runtime_id, bool reuse) {
  if (engine->kind() != BackendKind::Cpu) {
    fail(ErrorKind::Unsupported, "session", "no session support for the ", name(engine->kind()),
         " backend yet");
  }
  return std::make_unique<CpuEngineSession>(std::move(engine), runtime_id, reuse);
}

}  // namespace tenferro::detail
