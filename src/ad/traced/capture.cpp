// from_capture(): eager steps recorded by a CaptureScope become a Program.

#include <unordered_map>

#include "ad/eager/impl.hpp"
#include "ad/program/graph.hpp"

namespace tenferro {

Program from_capture(const CaptureScope& capture, ListRef<EagerTensor> inputs,
                     ListRef<EagerTensor> outputs) {
  // Eager values are identified by their impl; a value is the same traced
  // value wherever the capture saw it.
  std::unordered_map<const detail::EagerImpl*, TracedTensor> traced;
  std::vector<TracedTensor> placeholders;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      fail(ErrorKind::InvalidArgument, "from_capture", "input ", i, " is undefined");
    }
    TracedTensor p = placeholder(inputs[i].dtype(), to_sym_shape(inputs[i].shape()),
                                 "input" + std::to_string(i));
    if (!traced.emplace(inputs[i].impl().get(), p).second) {
      fail(ErrorKind::InvalidArgument, "from_capture", "input ", i, " is listed twice");
    }
    placeholders.push_back(p);
  }
  auto lookup = [&](const EagerTensor& t) {
    auto it = traced.find(t.impl().get());
    if (it != traced.end()) return it->second;
    // Not produced by a captured step and not an input: a constant.
    TracedTensor c = constant(t.value());
    traced.emplace(t.impl().get(), c);
    return c;
  };
  for (const CaptureScope::Step& step : capture.steps()) {
    std::vector<TracedTensor> ins;
    for (const EagerTensor& t : step.inputs) ins.push_back(lookup(t));
    std::vector<TracedTensor> outs = detail::make_traced(step.op, ins);
    for (std::size_t j = 0; j < outs.size() && j < step.outputs.size(); ++j) {
      traced[step.outputs[j].impl().get()] = outs[j];
    }
  }
  std::vector<TracedTensor> outs;
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    if (!outputs[j].defined()) {
      fail(ErrorKind::InvalidArgument, "from_capture", "output ", j, " is undefined");
    }
    outs.push_back(lookup(outputs[j]));
  }
  return compile(outs, placeholders);
}

}  // namespace tenferro
