// run_compiled(): prepare + run with prepared programs cached in the
// runtime's extension caches, keyed by structure, abstract signature,
// options and epoch.

#include <sstream>

#include "ad/program/exec.hpp"

namespace tenferro {

namespace {

ExtensionCacheKey cache_key(const Runtime& runtime, const Program& program,
                            std::span<const Tensor> inputs, const PrepareOptions& options) {
  // Abstract signature: dtype, rank, placement. Extents bind per run, and a
  // program whose extents are constant rejects other extents at binding.
  std::ostringstream os;
  os << std::hex << program.fingerprint() << std::dec << "|e" << runtime.epoch() << "|f"
     << options.fuse_elementwise << options.fusion_block;
  for (const Tensor& t : inputs) {
    os << '|' << name(t.dtype()) << ':' << t.rank() << ':' << to_string(t.placement());
  }
  return ExtensionCacheKey{kProgramCacheFamily, kProgramCacheName, os.str()};
}

}  // namespace

namespace {

std::vector<Tensor> run_compiled_checked(Runtime& runtime, const Program& program,
                                         std::span<const Tensor> inputs,
                                         const PrepareOptions& options) {
  if (!program.defined()) fail(ErrorKind::InvalidArgument, "run_compiled", "the program is empty");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      fail(ErrorKind::InvalidArgument, "run_compiled", "input ", i, " is undefined");
    }
  }
  // A reconfiguration on another thread between preparing and running makes
  // the plan stale (RuntimeState); run_compiled promises to re-prepare after
  // reconfigurations, so it retries against the new epoch.
  for (int attempt = 0;; ++attempt) {
    ExtensionCacheStore& store = runtime.extension_caches();
    const ExtensionCacheKey key = cache_key(runtime, program, inputs, options);
    auto cached = store.get<detail::PreparedState>(key);
    // A fingerprint collision must not run the wrong graph: compare structure.
    if (cached && cached->program.graph() != program.graph() &&
        !cached->program.graph()->same_structure(*program.graph())) {
      cached = nullptr;
    }
    PreparedProgram prepared;
    if (cached) {
      // Same structure, possibly other constants: run with this program's.
      if (cached->program.constants_ptr() != program.constants_ptr()) {
        auto copy = std::make_shared<detail::PreparedState>(*cached);
        copy->program = program;
        prepared = PreparedProgram(std::move(copy));
      } else {
        prepared = PreparedProgram(std::move(cached));
      }
    } else {
      prepared = prepare(runtime, program, InputSignature::of(inputs), options);
      // Kept without constant data: the cached state refers to the program,
      // whose constants are shared handles, so only metadata is charged.
      store.put<detail::PreparedState>(key, prepared.state(), 64 * (prepared.step_count() + 1));
    }
    try {
      return run(runtime, prepared, inputs);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::RuntimeState || attempt >= 16 ||
          prepared.epoch() == runtime.epoch())
        throw;
    }
  }
}

}  // namespace

std::vector<Tensor> run_compiled(Runtime& runtime, const Program& program, ListRef<Tensor> inputs,
                                 const PrepareOptions& options) {
  try {
    return run_compiled_checked(runtime, program, inputs, options);
  } catch (const Error& e) {
    detail::rethrow_in_execute_phase(e);
  }
}

CacheStats program_cache_stats(Runtime& runtime) {
  return runtime.extension_caches().stats(
      ExtensionCacheSelector::named(kProgramCacheFamily, kProgramCacheName));
}

void clear_program_cache(Runtime& runtime) {
  runtime.extension_caches().clear(
      ExtensionCacheSelector::named(kProgramCacheFamily, kProgramCacheName));
}

}  // namespace tenferro
