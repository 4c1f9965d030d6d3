#include "sim/observe/trace_writer.h"

#include <algorithm>
#include <cinttypes>
#include <map>

#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/support/error.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

// Trace Event timestamps are microseconds; picoseconds keep six decimals.
std::string us(Picos ps) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%06" PRId64, ps / 1000000, ps % 1000000);
  return buf;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

constexpr int kBarrierTrack = 0;  // tids: 0 barriers, unit + 1 for units

}  // namespace

TraceWriter::TraceWriter(const std::string& path, const SimProgram& program)
    : file_(path), p_(program), out_(file_.stream()) {
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out_);
  event("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":" +
        quoted("@" + program.kernel->name + " on " + program.model->name) + "}}");
  event("{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"thread_name\",\"args\":{\"name\":\"barriers\"}}");
  for (size_t u = 0; u < program.units.size(); ++u) {
    const std::string tid = std::to_string(u + 1);
    event("{\"ph\":\"M\",\"pid\":1,\"tid\":" + tid + ",\"name\":\"thread_name\",\"args\":{\"name\":" +
          quoted(program.units[u].name) + "}}");
    event("{\"ph\":\"M\",\"pid\":1,\"tid\":" + tid + ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" + tid + "}}");
  }
}

void TraceWriter::event(const std::string& json) {
  if (!first_) std::fputs(",\n", out_);
  first_ = false;
  std::fputs(json.c_str(), out_);
}

std::string TraceWriter::instance_name(const InstanceRecord& r) const {
  const SimInst& inst = p_.insts[static_cast<size_t>(r.inst)];
  std::string name = inst.name;
  if (!inst.nest.empty()) {
    name += "[";
    for (size_t i = 0; i < inst.nest.size(); ++i) {
      const LoopId l = inst.nest[i];
      name += (i ? "," : "") + p_.kernel->loops[static_cast<size_t>(l)].iv.substr(1) + "=" + std::to_string(r.loop_ivs[l]);
    }
    name += "]";
  }
  return name;
}

void TraceWriter::record(const InstanceRecord& r) {
  const SimInst& inst = p_.insts[static_cast<size_t>(r.inst)];
  const std::string name = quoted(instance_name(r));
  if (r.unit < 0) {
    event("{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":0,\"ts\":" + us(r.start) + ",\"name\":" + name + "}");
  } else {
    const std::string tid = std::to_string(r.unit + 1);
    std::string args = "\"opcode\":" + quoted(p_.kernel->insts[static_cast<size_t>(r.inst)].opcode);
    Picos stall = 0;
    for (Picos s : r.stall) stall += s;
    if (stall > 0) args += ",\"stall_ns\":" + us(stall * 1000);
    if (p_.units[static_cast<size_t>(r.unit)].kind == UnitKind::DmaQueue)
      args += ",\"bytes\":" + std::to_string(static_cast<int64_t>(inst.dma.bytes)) + ",\"first_byte_ns\":" +
              us((r.busy_start - r.start) * 1000);
    event("{\"ph\":\"X\",\"pid\":1,\"tid\":" + tid + ",\"ts\":" + us(r.start) + ",\"dur\":" + us(r.complete - r.start) +
          ",\"name\":" + name + ",\"cat\":" + quoted(op_class_name(inst.op_class)) + ",\"args\":{" + args + "}}");
    // The semaphore that set this start: an arrow from its signal to the wait.
    if (r.binding_channel >= 0 && r.start > r.free) {
      const SimChannel& c = p_.channels[static_cast<size_t>(r.binding_channel)];
      const SimInst& src = p_.insts[static_cast<size_t>(c.src)];
      if (c.cross_unit) {
        const std::string id = std::to_string(next_flow_++);
        const int src_tid = src.is_barrier ? kBarrierTrack : src.units[0] + 1;
        event("{\"ph\":\"s\",\"pid\":1,\"tid\":" + std::to_string(src_tid) + ",\"ts\":" + us(std::max<Picos>(0, r.binding_signal - 1)) +
              ",\"id\":" + id + ",\"name\":\"semaphore\",\"cat\":\"sync\"}");
        event("{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":" + tid + ",\"ts\":" + us(r.start) + ",\"id\":" + id +
              ",\"name\":\"semaphore\",\"cat\":\"sync\"}");
      }
    }
  }
  const Instruction& in = p_.kernel->insts[static_cast<size_t>(r.inst)];
  const bool accumulate = in.attrs.has(attr::kAccumulate);
  for (const auto* list : {&in.writes, &in.reads})
    for (const tandem::Access& a : *list) {
      const SpaceInfo* sp = p_.kernel->target->space(p_.kernel->tensors[static_cast<size_t>(a.tensor_id)].space);
      if (sp && sp->partitions > 0)
        accesses_.push_back({r.start, r.complete, a.tensor_id, list == &in.writes && !accumulate});
    }
}

void TraceWriter::finish() {
  // Live bytes: a tensor's value is live from the start of its write to the end of its last
  // read before the next write.
  std::stable_sort(accesses_.begin(), accesses_.end(), [](const Access& a, const Access& b) { return a.start < b.start; });
  struct Live {
    bool open = false;
    Picos from = 0, until = 0;
  };
  std::map<int, Live> live;
  std::map<std::string, std::map<Picos, int64_t>> deltas;  // space -> time -> bytes
  const Kernel& k = *p_.kernel;
  auto bytes_of = [&](int t) {
    const Tensor& tensor = k.tensors[static_cast<size_t>(t)];
    return partitions_of(k, tensor) * bytes_per_partition(k, tensor);
  };
  auto close = [&](int t, Live& l) {
    if (!l.open) return;
    const std::string& space = k.tensors[static_cast<size_t>(t)].space;
    deltas[space][l.from] += bytes_of(t);
    deltas[space][std::max(l.until, l.from)] -= bytes_of(t);
    l.open = false;
  };
  for (const Access& a : accesses_) {
    Live& l = live[a.tensor];
    if (a.write) {
      close(a.tensor, l);
      l = {true, a.start, a.end};
    } else if (l.open) {
      l.until = std::max(l.until, a.end);
    }
  }
  for (auto& [t, l] : live) close(t, l);
  for (const auto& [space, by_time] : deltas) {
    int64_t level = 0;
    for (const auto& [t, d] : by_time) {
      if (d == 0 && t != by_time.begin()->first) continue;  // a value replaced by the next at once
      level += d;
      event("{\"ph\":\"C\",\"pid\":1,\"ts\":" + us(t) + ",\"name\":" + quoted(space + " live bytes") +
            ",\"args\":{\"bytes\":" + std::to_string(level) + "}}");
    }
  }
  std::fputs("\n]}\n", out_);
  out_ = nullptr;
  file_.commit();
}

}  // namespace tandem
