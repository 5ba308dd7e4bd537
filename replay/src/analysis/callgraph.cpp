#include "reservoir/replay/callgraph.h"

#include <fmt/format.h>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace reservoir::replay {

namespace {

using Graph = boost::adjacency_list<boost::setS, boost::vecS, boost::bidirectionalS, Function>;
using Vertex = Graph::vertex_descriptor;

std::string suffix(std::string_view path, std::size_t components) {
  std::size_t pos = path.size();
  for (std::size_t i = 0; i < components && pos != std::string_view::npos && pos > 0; ++i) {
    pos = path.rfind('/', pos - 1);
    if (pos == std::string_view::npos) return std::string(path);
  }
  return std::string(path.substr(pos == std::string_view::npos ? 0 : pos + 1));
}

}  // namespace

struct CallGraph::Impl {
  Graph g;
  std::vector<std::size_t> frame_function;  // FrameId -> vertex
};

CallGraph::CallGraph(const traces::Snapshot& snap, std::size_t device_index) : impl_(std::make_unique<Impl>()) {
  Graph& g = impl_->g;
  std::map<std::pair<std::uint32_t, std::uint32_t>, Vertex> by_key;
  impl_->frame_function.resize(snap.frames.size());
  for (std::uint32_t f = 0; f < snap.frames.size(); ++f) {
    const auto& fr = snap.frames[f];
    const auto key = std::make_pair(fr.filename.value(), fr.name.value());
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      Function fn;
      fn.file = fr.filename;
      fn.name = fr.name;
      it = by_key.emplace(key, boost::add_vertex(fn, g)).first;
    }
    impl_->frame_function[f] = it->second;
  }
  // Point names: the shortest path suffix that keeps file:name unique.
  for (std::size_t components = 1; components < 16; ++components) {
    std::map<std::string, int> seen;
    for (Vertex v : boost::make_iterator_range(boost::vertices(g)))
      g[v].point_name = fmt::format("{}:{}", suffix(snap.str(g[v].file), components), snap.str(g[v].name));
    for (Vertex v : boost::make_iterator_range(boost::vertices(g))) ++seen[g[v].point_name];
    bool unique = true;
    for (const auto& [k, n] : seen) unique = unique && n == 1;
    if (unique) break;
  }
  // Edges from the stacks (innermost first: frame i+1 calls frame i), and per-event weights.
  const auto& events = snap.devices.at(device_index).events;
  std::vector<std::uint8_t> in_prev(boost::num_vertices(g), 0), in_cur(boost::num_vertices(g), 0);
  std::vector<Vertex> cur, prev;
  std::vector<std::uint8_t> stack_done(snap.stackCount(), 0);
  for (const auto& e : events) {
    cur.clear();
    const StackId stack = snap.callStack(e);  // a backward-pass entry counts at its forward frames
    const auto frames = snap.stack(stack);
    const bool new_stack = stack.valid() && stack.value() < stack_done.size() && !stack_done[stack.value()];
    if (new_stack) stack_done[stack.value()] = 1;
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const Vertex v = impl_->frame_function[frames[i].value()];
      if (new_stack && i + 1 < frames.size()) boost::add_edge(impl_->frame_function[frames[i + 1].value()], v, g);
      if (in_cur[v]) continue;
      in_cur[v] = 1;
      cur.push_back(v);
      ++g[v].events;
      if (!in_prev[v]) ++g[v].runs;
      if (e.action == traces::Action::kAlloc) {
        g[v].alloc_bytes += e.size;
        ++g[v].allocations;
      }
    }
    for (Vertex v : prev) in_prev[v] = 0;
    for (Vertex v : cur) {
      in_prev[v] = 1;
      in_cur[v] = 0;
    }
    std::swap(prev, cur);
  }
  // Depth from the roots (functions nobody calls), breadth first.
  std::vector<std::uint32_t> depth(boost::num_vertices(g), ~0u);
  std::vector<Vertex> queue;
  for (Vertex v : boost::make_iterator_range(boost::vertices(g)))
    if (boost::in_degree(v, g) == 0) {
      depth[v] = 0;
      queue.push_back(v);
    }
  for (std::size_t qi = 0; qi < queue.size(); ++qi)
    for (auto e : boost::make_iterator_range(boost::out_edges(queue[qi], g))) {
      const Vertex t = boost::target(e, g);
      if (depth[t] == ~0u) {
        depth[t] = depth[queue[qi]] + 1;
        queue.push_back(t);
      }
    }
  for (Vertex v : boost::make_iterator_range(boost::vertices(g))) g[v].depth = depth[v] == ~0u ? 0 : depth[v];
}

CallGraph::~CallGraph() = default;
CallGraph::CallGraph(CallGraph&&) noexcept = default;
CallGraph& CallGraph::operator=(CallGraph&&) noexcept = default;

std::size_t CallGraph::size() const { return boost::num_vertices(impl_->g); }
const Function& CallGraph::function(std::size_t v) const { return impl_->g[v]; }
std::size_t CallGraph::functionOf(FrameId frame) const { return impl_->frame_function.at(frame.value()); }

std::vector<std::size_t> CallGraph::callers(std::size_t v) const {
  std::vector<std::size_t> out;
  for (auto e : boost::make_iterator_range(boost::in_edges(v, impl_->g))) out.push_back(boost::source(e, impl_->g));
  return out;
}

std::vector<std::size_t> CallGraph::callees(std::size_t v) const {
  std::vector<std::size_t> out;
  for (auto e : boost::make_iterator_range(boost::out_edges(v, impl_->g))) out.push_back(boost::target(e, impl_->g));
  return out;
}

std::vector<std::size_t> CallGraph::byAllocatedBytes(std::uint64_t min_bytes) const {
  std::vector<std::size_t> out;
  for (std::size_t v = 0; v < size(); ++v)
    if (impl_->g[v].alloc_bytes >= min_bytes && impl_->g[v].allocations > 0) out.push_back(v);
  std::sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) {
    if (impl_->g[a].alloc_bytes != impl_->g[b].alloc_bytes) return impl_->g[a].alloc_bytes > impl_->g[b].alloc_bytes;
    return a < b;
  });
  return out;
}

CallTree buildCallTree(const traces::Snapshot& snap, std::span<const std::pair<StackId, std::int64_t>> live,
                       TreeDirection direction) {
  CallTree t;
  t.nodes.emplace_back();
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> child;  // (parent, frame) -> node
  for (const auto& [stack, bytes] : live) {
    const auto frames = snap.stack(stack);
    std::uint32_t node = 0;
    t.nodes[0].bytes += bytes;
    ++t.nodes[0].blocks;
    for (std::size_t k = 0; k < frames.size(); ++k) {
      const FrameId f = direction == TreeDirection::kTopDown ? frames[frames.size() - 1 - k] : frames[k];
      auto [it, inserted] = child.try_emplace({node, f.value()}, static_cast<std::uint32_t>(t.nodes.size()));
      if (inserted) {
        CallTreeNode n;
        n.frame = f;
        n.parent = node;
        t.nodes.push_back(n);
        t.nodes[node].children.push_back(it->second);
      }
      node = it->second;
      t.nodes[node].bytes += bytes;
      ++t.nodes[node].blocks;
    }
  }
  for (auto& n : t.nodes)
    std::sort(n.children.begin(), n.children.end(), [&](std::uint32_t a, std::uint32_t b) {
      return t.nodes[a].bytes != t.nodes[b].bytes ? t.nodes[a].bytes > t.nodes[b].bytes : a < b;
    });
  return t;
}

}  // namespace reservoir::replay
