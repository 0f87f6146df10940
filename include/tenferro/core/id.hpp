#pragma once
// Validated ids of extension families and engines: "<library>.<name>.v<N>".
// Backends name their engine with one (Backend::engine_id), modules register
// (family, engine) pairs by them.

#include <compare>
#include <string>
#include <string_view>

namespace tenferro {

/// A validated family id "<library>.<op>.v<N>": lowercase segments of
/// [a-z0-9_] starting with a letter, N >= 1. Malformed ids are InvalidArgument.
class FamilyId {
 public:
  explicit FamilyId(std::string id);
  const std::string& str() const { return id_; }
  std::string_view library() const;
  int version() const;
  friend bool operator==(const FamilyId&, const FamilyId&) = default;
  friend auto operator<=>(const FamilyId&, const FamilyId&) = default;

 private:
  std::string id_;
};

/// Same grammar as FamilyId, used for engines ("tenferro.cpu.v1").
class EngineId {
 public:
  explicit EngineId(std::string id);
  const std::string& str() const { return id_; }
  friend bool operator==(const EngineId&, const EngineId&) = default;
  friend auto operator<=>(const EngineId&, const EngineId&) = default;

 private:
  std::string id_;
};

/// "tenferro.cpu.v1": the engine a CpuBackend registers as (its engine_id()),
/// and the default engine of simple families. A well-known name only: code
/// that uses it links no backend.
const EngineId& cpu_engine_id();

}  // namespace tenferro
