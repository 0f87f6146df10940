#include "runtime/sessions.hpp"

namespace tenferro::detail {

namespace {
class CpuEngineSession final : public EngineSession {
 public:
  CpuEngineSession(const EngineRegistration& engine, std::uint64_t runtime_id, bool reuse)
      : engine_(engine), runtime_id_(runtime_id) {
    auto& cpu = static_cast<CpuBackend&>(engine.backend());
    if (!reuse || CpuSession::current(cpu) == nullptr) session_ = std::make_unique<CpuSession>(cpu);
  }
  Backend& backend() override { return engine_.backend(); }
  const EngineId& engine() const override { return engine_.id(); }
  std::uint64_t runtime_id() const override { return runtime_id_; }

 private:
  const EngineRegistration& engine_;
  std::uint64_t runtime_id_;
  std::unique_ptr<CpuSession> session_;
};
}  // namespace

std::unique_ptr<EngineSession> make_engine_session(const EngineRegistration& engine,
                                                   std::uint64_t runtime_id, bool reuse) {
  if (engine.kind() != BackendKind::Cpu) {
    fail(ErrorKind::Unsupported, "session", "no session support for the ", name(engine.kind()),
         " backend yet");
  }
  return std::make_unique<CpuEngineSession>(engine, runtime_id, reuse);
}

}  // namespace tenferro::detail
