// Parameters of a scaled trace: parsing "world=2,seq=4096", grids, the capture sidecar, the target.
#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "reservoir/replay/scale.h"

namespace reservoir::replay::scale {
namespace {

std::vector<std::string_view> splitCommas(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

Expected<std::int64_t> parseValue(std::string_view text, std::string_view whole) {
  std::int64_t v = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc{} || ptr != end || text.empty())
    return Status::usage(fmt::format("'{}': '{}' is not an integer (expected NAME=VALUE[,VALUE...],...)", whole, text));
  return v;
}

// name -> values, in the order the names were given.
using Lists = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;

Expected<Lists> parseLists(std::string_view text) {
  Lists lists;
  if (text.empty()) return Status::usage("empty parameter list (expected NAME=VALUE,...)");
  for (std::string_view item : splitCommas(text)) {
    const auto eq = item.find('=');
    std::string_view value = item;
    if (eq != std::string_view::npos) {
      const std::string name(item.substr(0, eq));
      if (name.empty()) return Status::usage(fmt::format("'{}': a parameter without a name", text));
      for (const auto& [n, v] : lists)
        if (n == name) return Status::usage(fmt::format("'{}': parameter '{}' given twice", text, name));
      lists.push_back({name, {}});
      value = item.substr(eq + 1);
    } else if (lists.empty()) {
      return Status::usage(fmt::format("'{}': expected NAME=VALUE first", text));
    }
    auto v = parseValue(value, text);
    if (!v) return v.status();
    if (Status st = checkParamValue(lists.back().first, *v); !st.ok()) return st.prefixed(fmt::format("'{}': ", text));
    lists.back().second.push_back(*v);
  }
  return lists;
}

Status tooManyTargets(const Lists& lists) {
  std::string sizes;
  long double product = 1;
  for (const auto& [name, values] : lists) {
    sizes += fmt::format("{}{} {}", sizes.empty() ? "" : " x ", values.size(), name);
    product *= static_cast<long double>(values.size());
  }
  return Status::usage(fmt::format("a grid of {} = {:.6g} targets is more than the {} one run may have; give fewer values",
                                   sizes, static_cast<double>(product), kMaxTargets));
}

}  // namespace

Status checkParamValue(std::string_view name, std::int64_t value) {
  if ((name == "world" || name == "seq" || name == "batch") && value < 1)
    return Status::usage(fmt::format("{}={}: must be at least 1", name, value));
  if (name == "world" && value > kMaxWorld)
    return Status::usage(fmt::format("world={}: more ranks than any job has (at most {})", value, kMaxWorld));
  return {};
}

Status checkParams(const Params& params) {
  for (const auto& [k, v] : params)
    if (Status st = checkParamValue(k, v); !st.ok()) return st;
  return {};
}

Expected<Params> parseParams(std::string_view text) {
  auto lists = parseLists(text);
  if (!lists) return lists.status();
  Params p;
  for (const auto& [name, values] : *lists) {
    if (values.size() != 1)
      return Status::usage(fmt::format("'{}': '{}' has {} values, expected one", text, name, values.size()));
    p[name] = values[0];
  }
  return p;
}

Expected<std::vector<Params>> parseGrid(std::string_view text) {
  auto lists = parseLists(text);
  if (!lists) return lists.status();
  std::size_t count = 1;  // refused before any target is made: 4 lists of 100 values made 10^8 of them
  for (const auto& [name, values] : *lists)
    if (__builtin_mul_overflow(count, values.size(), &count) || count > kMaxTargets) count = kMaxTargets + 1;
  if (count > kMaxTargets) return tooManyTargets(*lists);
  std::vector<Params> grid{Params{}};
  for (const auto& [name, values] : *lists) {
    std::vector<Params> next;
    for (const auto& g : grid)
      for (std::int64_t v : values) {
        Params p = g;
        p[name] = v;
        next.push_back(std::move(p));
      }
    grid = std::move(next);
  }
  return grid;
}

std::string paramsText(const Params& params) {
  std::string s;
  for (const auto& [k, v] : params) s += fmt::format("{}{}={}", s.empty() ? "" : ",", k, v);
  return s;
}

Expected<Params> paramsFromCaptureJson(const std::string& trace_path) {
  std::filesystem::path p(trace_path);
  std::string stem = p.filename().string();
  for (const char* ext : {".gz", ".zst", ".pickle"})
    if (stem.size() > std::strlen(ext) && stem.ends_with(ext)) stem.resize(stem.size() - std::strlen(ext));
  const auto json_path = p.parent_path() / (stem + ".json");
  std::ifstream in(json_path);
  if (!in)
    return Status::error(
        fmt::format("{}: no parameters given and no capture sidecar {} to read them from "
                    "(give its parameters with it: NAME=VALUE,...)",
                    trace_path, json_path.string()));
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return Status::error(fmt::format("{}: not a JSON object (expected the capture kit's sidecar)", json_path.string()));
  Params params;
  if (j.contains("world_size") && j["world_size"].is_number_integer())
    params["world"] = j["world_size"].get<std::int64_t>();
  if (j.contains("config") && j["config"].is_object())
    for (const auto& [k, v] : j["config"].items())
      if (v.is_number_integer()) params[k] = v.get<std::int64_t>();
  if (params.empty())
    return Status::error(fmt::format(
        "{}: neither world_size nor an integer in config (expected the capture kit's sidecar)", json_path.string()));
  if (Status st = checkParams(params); !st.ok())
    return st.prefixed(fmt::format("{}: the capture JSON's ", json_path.string()));
  return params;
}

Expected<Params> completeTarget(const std::vector<Input>& inputs, const Params& target) {
  if (inputs.empty()) return Status::error("no inputs to scale from");
  // The parameters every input has (a sidecar may record more than another input's --from gives).
  std::set<std::string> names;
  for (const auto& [k, v] : inputs[0].params) names.insert(k);
  for (const auto& in : inputs) std::erase_if(names, [&](const std::string& k) { return !in.params.count(k); });
  for (const auto& in : inputs)
    if (Status st = checkParams(in.params); !st.ok()) return st.prefixed(in.name + ": ");
  if (Status st = checkParams(target); !st.ok()) return st.prefixed("target ");
  for (const auto& [k, v] : target)
    if (!names.count(k))
      return Status::usage(fmt::format("target parameter '{}' is not a parameter of every input (they all have: {})", k,
                                       fmt::join(names, ", ")));
  Params out = target;
  for (const auto& name : names) {
    if (out.count(name)) continue;
    const std::int64_t first = inputs[0].params.at(name);
    for (const auto& in : inputs)
      if (in.params.at(name) != first)
        return Status::usage(
            fmt::format("the inputs differ in '{}' ({} in {}, {} in {}): give the target's value of '{}'", name, first,
                        inputs[0].name, in.params.at(name), in.name, name));
    out[name] = first;
  }
  return out;
}

std::optional<std::int64_t> variableValue(const Params& params, std::string_view variable) {
  if (variable == "tokens") {
    auto seq = params.find("seq");
    if (seq == params.end()) return std::nullopt;
    auto batch = params.find("batch");
    std::int64_t tokens = 0;  // saturates: a law evaluated there is out of range, not wrapped around
    if (__builtin_mul_overflow(seq->second, batch == params.end() ? 1 : batch->second, &tokens))
      return std::numeric_limits<std::int64_t>::max();
    return tokens;
  }
  auto it = params.find(std::string(variable));
  if (it == params.end()) return std::nullopt;
  return it->second;
}

}  // namespace reservoir::replay::scale
