// Validation of family and engine ids (core/id.hpp).

#include "tenferro/core/id.hpp"

#include <cctype>
#include <vector>

#include "tenferro/core/error.hpp"

namespace tenferro {

namespace {
// <segment>.<segment>[.<segment>...].v<N>: at least a library, a name and a version.
void validate_id(const std::string& id, const char* what) {
  auto bad = [&](const std::string& why) {
    fail(ErrorKind::InvalidArgument, what, "malformed id '", id, "': ", why,
         " (expected <library>.<name>.v<N>, lowercase [a-z0-9_], e.g. mylib.scale_by.v1)");
  };
  std::vector<std::string> parts;
  std::string cur;
  for (char c : id) {
    if (c == '.') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  if (parts.size() < 3) bad("needs at least three dot-separated parts");
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (p.empty()) bad("empty segment");
    if (!std::islower(static_cast<unsigned char>(p[0])))
      bad("segment '" + p + "' must start with a lowercase letter");
    for (char c : p) {
      if (!(std::islower(static_cast<unsigned char>(c)) ||
            std::isdigit(static_cast<unsigned char>(c)) || c == '_')) {
        bad("segment '" + p + "' has character '" + std::string(1, c) + "'");
      }
    }
  }
  const std::string& v = parts.back();
  if (v.size() < 2 || v[0] != 'v') bad("last segment must be a version v<N>");
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(v[i]))) bad("version '" + v + "' is not v<N>");
  }
  if (v[1] == '0') bad("version must be >= 1 without leading zeros");
}
}  // namespace

FamilyId::FamilyId(std::string id) : id_(std::move(id)) {
  validate_id(id_, "family_id");
}

std::string_view FamilyId::library() const {
  return std::string_view(id_).substr(0, id_.find('.'));
}

int FamilyId::version() const {
  return std::stoi(id_.substr(id_.rfind('.') + 2));
}

EngineId::EngineId(std::string id) : id_(std::move(id)) {
  validate_id(id_, "engine_id");
}

const EngineId& cpu_engine_id() {
  static const EngineId id("tenferro.cpu.v1");
  return id;
}

}  // namespace tenferro
