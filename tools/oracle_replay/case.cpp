#include "case.hpp"

#include <algorithm>
#include <complex>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace replay {

using tenferro::DType;
using tenferro::Tensor;

namespace {

template <class T>
Tensor make_real(const std::vector<std::int64_t>& shape, const Json& data) {
  std::vector<T> v;
  v.reserve(data.size());
  for (const auto& x : data) v.push_back(static_cast<T>(json_number(x)));
  return Tensor::from_col_major(std::span<const std::int64_t>(shape), std::span<const T>(v));
}

template <class R>
Tensor make_complex(const std::vector<std::int64_t>& shape, const Json& data) {
  std::vector<std::complex<R>> v;
  v.reserve(data.size());
  for (const auto& x : data) {
    if (!x.is_array() || x.size() != 2) throw std::runtime_error("complex entry is not [re, im]");
    v.emplace_back(static_cast<R>(json_number(x[0])), static_cast<R>(json_number(x[1])));
  }
  return Tensor::from_col_major(std::span<const std::int64_t>(shape),
                                std::span<const std::complex<R>>(v));
}

NamedTensors named(const Json& obj) {
  NamedTensors out;
  for (auto it = obj.begin(); it != obj.end(); ++it)
    out.emplace_back(it.key(), tensor_from_json(*it));
  return out;
}

Tolerance tolerance(const Json& j) {
  return {j.value("atol", 0.0), j.value("rtol", 0.0)};
}

// Python's json writes NaN, Infinity and -Infinity as bare tokens, which strict
// JSON parsers reject: quote them outside strings.
std::string quote_nonfinite(const std::string& line) {
  std::string out;
  out.reserve(line.size() + 16);
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (in_string) {
      out += ch;
      if (ch == '\\' && i + 1 < line.size()) {
        out += line[++i];
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == '"') {
      in_string = true;
      out += ch;
      continue;
    }
    bool replaced = false;
    for (const char* tok : {"-Infinity", "Infinity", "NaN"}) {
      const std::string t(tok);
      if (line.compare(i, t.size(), t) == 0) {
        out += '"' + t + '"';
        i += t.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += ch;
  }
  return out;
}

}  // namespace

DType dtype_from_name(const std::string& s) {
  if (s == "float32") return DType::F32;
  if (s == "float64") return DType::F64;
  if (s == "complex64") return DType::C64;
  if (s == "complex128") return DType::C128;
  if (s == "int32") return DType::I32;
  if (s == "int64") return DType::I64;
  throw std::runtime_error("unknown dtype '" + s + "'");
}

double json_number(const Json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  if (j.is_boolean()) return j.get<bool>() ? 1.0 : 0.0;
  throw std::runtime_error("expected a number, got " + j.dump());
}

Tensor tensor_from_json(const Json& j) {
  if (j.value("order", std::string("row_major")) != "row_major") {
    throw std::runtime_error("only row_major tensors are supported");
  }
  std::vector<std::int64_t> shape = j.at("shape").get<std::vector<std::int64_t>>();
  std::reverse(shape.begin(), shape.end());
  const Json& data = j.at("data");
  switch (dtype_from_name(j.at("dtype").get<std::string>())) {
    case DType::F32:
      return make_real<float>(shape, data);
    case DType::F64:
      return make_real<double>(shape, data);
    case DType::C64:
      return make_complex<float>(shape, data);
    case DType::I32:
      return make_real<std::int32_t>(shape, data);
    case DType::I64:
      return make_real<std::int64_t>(shape, data);
    default:
      return make_complex<double>(shape, data);
  }
}

std::int64_t dim_to_axis(std::int64_t dim, std::int64_t rank) {
  const std::int64_t r = std::max<std::int64_t>(rank, 1);
  if (dim < -r || dim >= r) {
    throw std::runtime_error("dim " + std::to_string(dim) + " out of range for rank " +
                             std::to_string(rank));
  }
  if (dim < 0) dim += r;
  return rank == 0 ? 0 : rank - 1 - dim;
}

Case parse_case(const std::string& line) {
  const Json j = Json::parse(quote_nonfinite(line));
  Case c;
  c.case_id = j.at("case_id").get<std::string>();
  c.op = j.at("op").get<std::string>();
  c.family = j.value("family", std::string("identity"));
  c.dtype = j.value("dtype", std::string());
  if (j.contains("observable"))
    c.observable = j["observable"].value("kind", std::string("identity"));
  if (j.contains("op_kwargs") && j["op_kwargs"].is_object()) c.kwargs = j["op_kwargs"];
  if (j.contains("op_args") && j["op_args"].is_array()) c.args = j["op_args"];
  c.expect_error = j.value("expected_behavior", std::string("success")) == "error";
  if (j.contains("expected_error")) c.error_reason = j["expected_error"].dump();
  if (j.contains("inputs")) c.inputs = named(j["inputs"]);
  if (j.contains("comparison")) {
    const Json& cmp = j["comparison"];
    if (cmp.contains("first_order")) c.first_order = tolerance(cmp["first_order"]);
    if (cmp.contains("second_order")) {
      c.second_order = tolerance(cmp["second_order"]);
      c.has_second_order = true;
    }
  }
  if (j.contains("probes")) {
    for (const Json& p : j["probes"]) {
      Probe probe;
      probe.id = p.value("probe_id", std::string());
      probe.direction = named(p.at("direction"));
      probe.cotangent = named(p.at("cotangent"));
      const Json& ref = p.at("pytorch_ref");
      if (ref.contains("jvp")) probe.ref.jvp = named(ref["jvp"]);
      if (ref.contains("vjp")) probe.ref.vjp = named(ref["vjp"]);
      if (ref.contains("hvp")) {
        probe.ref.hvp = named(ref["hvp"]);
        probe.ref.has_hvp = true;
      }
      c.probes.push_back(std::move(probe));
    }
  }
  return c;
}

std::vector<Case> load_cases(const std::string& dir, std::vector<std::string>& errors) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) throw std::runtime_error("cases directory '" + dir + "' not found");
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".jsonl")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Case> cases;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::string line;
    std::size_t lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      try {
        cases.push_back(parse_case(line));
      } catch (const std::exception& e) {
        errors.push_back(f.string() + ":" + std::to_string(lineno) + ": " + e.what());
      }
    }
  }
  return cases;
}

}  // namespace replay
