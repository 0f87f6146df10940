#pragma once
// One oracle case (../shared/oracles/cases/<op>/<family>.jsonl), loaded into
// column-major tensors. A row-major tensor of shape [d0, ..., dk] holds the same
// linear data as a column-major tensor of shape [dk, ..., d0], so loading only
// reverses the shape; PyTorch dimension d of a rank-r tensor is our axis
// r - 1 - d (see dim_to_axis).

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tenferro/tensor/tensor.hpp"

namespace replay {

using Json = nlohmann::ordered_json;
using NamedTensors = std::vector<std::pair<std::string, tenferro::Tensor>>;

struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

struct Reference {
  NamedTensors jvp;  // per output
  NamedTensors vjp;  // per input
  NamedTensors hvp;  // per input; empty when the case has none
  bool has_hvp = false;
};

struct Probe {
  std::string id;
  NamedTensors direction;  // per input
  NamedTensors cotangent;  // per output
  Reference ref;           // pytorch_ref
};

struct Case {
  std::string case_id;
  std::string op;
  std::string family;
  std::string dtype;
  std::string observable;
  Json kwargs = Json::object();
  Json args = Json::array();  // op_args: positional arguments after the inputs
  NamedTensors inputs;        // in the case's order; integer inputs are not differentiated
  std::vector<Probe> probes;
  Tolerance first_order;
  Tolerance second_order;
  bool has_second_order = false;
  bool expect_error = false;
  std::string error_reason;
};

/// Parses one JSONL line. Throws std::runtime_error on malformed input.
Case parse_case(const std::string& line);

/// All cases under `dir` (every <op>/<family>.jsonl), sorted by op and family.
/// Malformed lines are reported through `errors` and skipped.
std::vector<Case> load_cases(const std::string& dir, std::vector<std::string>& errors);

/// The dtype named by the oracle ("float32", "float64", "complex64",
/// "complex128", and "int32" / "int64" for integer inputs such as lu_solve's
/// pivots, which are not differentiated); std::runtime_error for any other name.
tenferro::DType dtype_from_name(const std::string& s);

/// A JSON number, accepting the strings "NaN", "Infinity" and "-Infinity" that
/// parse_case substitutes for Python's non-standard literals.
double json_number(const Json& j);

/// Tensor from the oracle's JSON form (row-major data, [re, im] pairs for complex).
tenferro::Tensor tensor_from_json(const Json& j);

/// Our axis for PyTorch dimension `dim` (negative counts from the end) of a
/// rank-`rank` tensor; rank 0 accepts 0 and -1 like PyTorch.
std::int64_t dim_to_axis(std::int64_t dim, std::int64_t rank);

}  // namespace replay
