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

// Times are floored to whole nanoseconds: flooring is monotone, so spans that nest in
// picoseconds still nest, and a span's end is written as floor(end) - floor(start), never
// as a rounded duration. Trace Event timestamps are microseconds: ns with three exact decimals.
// Slices are 'B'/'E' pairs, not 'X' with a duration: a viewer that adds ts + dur in doubles
// (speedscope does) ends a slice an ulp past the start of the next, or past its parent's end,
// and logs stack errors; an end written as its own timestamp parses to the same double as
// every other time with the same text.
int64_t ns(Picos ps) { return ps / 1000; }

// n / 1000 with three exact decimals: nanoseconds as microseconds, picoseconds as nanoseconds.
std::string thousandths(int64_t n) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03" PRId64, n / 1000, n % 1000);
  return buf;
}

// The length of the well-formed UTF-8 sequence at s[i] (a byte of 0x80 or more), or 0.
size_t utf8_length(const std::string& s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  const unsigned char d = static_cast<unsigned char>(s[i + 1]);
  if ((c == 0xe0 && d < 0xa0) || (c == 0xed && d >= 0xa0) || (c == 0xf0 && d < 0x90) || (c == 0xf4 && d >= 0x90))
    return 0;  // overlong, a surrogate, or past U+10FFFF
  return n;
}

// A JSON string (RFC 8259) of `s`, whatever names it holds: quotes and backslashes escaped,
// control characters as \u00XX, UTF-8 as it is, and a byte that is not UTF-8 as U+FFFD.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += s[i];
    } else if (c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else if (c < 0x80) {
      out += s[i];
    } else if (const size_t n = utf8_length(s, i)) {
      out.append(s, i, n);
      i += n - 1;
    } else {
      out += "\\ufffd";
    }
  }
  return out + "\"";
}

constexpr int kBarrierTrack = 0;      // tids: 0 barriers, unit + 1 for units
constexpr int kLoopTracks = 1 << 30;  // tid of loop l's track: kLoopTracks + l

}  // namespace

TraceWriter::TraceWriter(const std::string& path, const SimProgram& program, const TraceFilter& filter)
    : file_(path), p_(program), filter_(filter), out_(file_.stream()), slot_end_(program.units.size()) {
  const std::vector<Loop>& loops = program.kernel->loops;
  for (const std::string& iv : filter_.loops)
    if (std::none_of(loops.begin(), loops.end(), [&](const Loop& l) { return l.iv == iv; }))
      throw Error("--trace-loops: the kernel has no loop " + iv);
  for (const Loop& l : loops) loop_kept_.push_back(filter_.loops.empty() || filter_.loops.count(l.iv));
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out_);
  event("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":" +
        quoted("@" + program.kernel->name + " on " + program.model->name) + "}}");
  event("{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"thread_name\",\"args\":{\"name\":\"barriers\"}}");
  for (size_t u = 0; u < program.units.size(); ++u) {
    const std::string tid = std::to_string(u + 1);
    event("{\"ph\":\"M\",\"pid\":1,\"tid\":" + tid +
          ",\"name\":\"thread_name\",\"args\":{\"name\":" + quoted(program.units[u].name) + "}}");
    event("{\"ph\":\"M\",\"pid\":1,\"tid\":" + tid +
          ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" + std::to_string((u + 1) * 1000) + "}}");
  }
}

void TraceWriter::event(const std::string& json) {
  if (!first_) std::fputs(",\n", out_);
  first_ = false;
  std::fputs(json.c_str(), out_);
  bytes_ += static_cast<int64_t>(json.size()) + 2;
}

bool TraceWriter::keeps(const InstanceRecord& r) const {
  const SimInst& inst = p_.insts[static_cast<size_t>(r.inst)];
  for (LoopId l : inst.nest)
    if (loop_kept_[static_cast<size_t>(l)]) {
      const int64_t iteration = r.loop_counts[l] - 1;
      return iteration >= filter_.first_iteration && iteration < filter_.end_iteration;
    }
  return filter_.loops.empty();
}

bool TraceWriter::over_budget() { return filter_.max_bytes > 0 && bytes_ >= filter_.max_bytes; }

bool TraceWriter::mark_iterations(const InstanceRecord& r) {
  bool in_kept_loop = false;
  for (LoopId l : p_.insts[static_cast<size_t>(r.inst)].nest) {
    if (!loop_kept_[static_cast<size_t>(l)]) continue;
    auto [it, fresh] = iteration_starts_.try_emplace({l, r.loop_counts[l]}, r.start, r.loop_ivs[l]);
    if (!fresh) it->second.first = std::min(it->second.first, r.start);
    in_kept_loop = true;
  }
  return in_kept_loop;
}

void TraceWriter::write_iteration_markers() {
  std::set<LoopId> named;
  for (const auto& [key, start] : iteration_starts_) {
    const auto& [loop, count] = key;
    const Loop& l = p_.kernel->loops[static_cast<size_t>(loop)];
    const std::string tid = std::to_string(kLoopTracks + loop);
    if (named.insert(loop).second) {
      event("{\"ph\":\"M\",\"pid\":1,\"tid\":" + tid +
            ",\"name\":\"thread_name\",\"args\":{\"name\":" + quoted("loop " + l.iv + " iterations") + "}}");
      event("{\"ph\":\"M\",\"pid\":1,\"tid\":" + tid +
            ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" + std::to_string(-1000 + loop) + "}}");
    }
    event("{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":" + tid + ",\"ts\":" + thousandths(ns(start.first)) +
          ",\"name\":" + quoted(l.iv.substr(1) + "=" + std::to_string(start.second)) + ",\"cat\":\"iteration\"," +
          "\"args\":{\"iteration\":" + std::to_string(count - 1) + "}}");
  }
}

std::string TraceWriter::instance_name(const InstanceRecord& r) const {
  const SimInst& inst = p_.insts[static_cast<size_t>(r.inst)];
  std::string name = inst.name;
  if (!inst.nest.empty()) {
    name += "[";
    for (size_t i = 0; i < inst.nest.size(); ++i) {
      const LoopId l = inst.nest[i];
      name +=
          (i ? "," : "") + p_.kernel->loops[static_cast<size_t>(l)].iv.substr(1) + "=" + std::to_string(r.loop_ivs[l]);
    }
    name += "]";
  }
  return name;
}

int TraceWriter::track(int unit, int64_t from, int64_t to) {
  std::vector<int64_t>& ends = slot_end_[static_cast<size_t>(unit)];
  size_t k = 0;
  while (k < ends.size() && ends[k] > from) ++k;
  if (k == ends.size()) ends.push_back(to);
  ends[k] = to;
  const int tid = unit + 1 + static_cast<int>(k * (p_.units.size() + 1));
  if (k > 0 && named_.insert(tid).second) {
    const std::string t = std::to_string(tid);
    event("{\"ph\":\"M\",\"pid\":1,\"tid\":" + t + ",\"name\":\"thread_name\",\"args\":{\"name\":" +
          quoted(p_.units[static_cast<size_t>(unit)].name + " in flight " + std::to_string(k + 1)) + "}}");
    event("{\"ph\":\"M\",\"pid\":1,\"tid\":" + t + ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" +
          std::to_string((unit + 1) * 1000 + static_cast<int>(k)) + "}}");
  }
  return tid;
}

void TraceWriter::duration(const char* ph, int tid, int64_t at, const std::string& name, const std::string& cat,
                           const std::string& args) {
  event(std::string("{\"ph\":\"") + ph + "\",\"pid\":1,\"tid\":" + std::to_string(tid) + ",\"ts\":" + thousandths(at) +
        ",\"name\":" + name + ",\"cat\":" + quoted(cat) + (args.empty() ? "" : ",\"args\":{" + args + "}") + "}");
}

void TraceWriter::note_accesses(const InstanceRecord& r) {
  const Instruction& in = p_.kernel->insts[static_cast<size_t>(r.inst)];
  const bool accumulate = reads_accumulator(*p_.kernel, r.inst, r.loop_ivs);
  for (const auto* list : {&in.writes, &in.reads})
    for (const tandem::Access& a : *list) {
      const SpaceInfo* sp = p_.kernel->target->space(p_.kernel->tensors[static_cast<size_t>(a.tensor_id)].space);
      if (sp && sp->partitions > 0)
        accesses_.push_back({r.start, r.complete, a.tensor_id, list == &in.writes && !accumulate});
    }
}

void TraceWriter::record(const InstanceRecord& r) {
  // Live bytes count every instance, kept or not.
  note_accesses(r);
  if (truncated_at_ >= 0 || !keeps(r)) return;
  if (over_budget()) {
    truncated_at_ = r.start;
    return;
  }
  if (mark_iterations(r)) {
    kept_from_ = std::min(kept_from_, r.start);
    kept_to_ = std::max(kept_to_, r.complete);
  }
  const SimInst& inst = p_.insts[static_cast<size_t>(r.inst)];
  const std::string name = quoted(instance_name(r));
  const int64_t from = ns(r.start), to = ns(r.complete);
  if (r.unit < 0) {
    event("{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":0,\"ts\":" + thousandths(from) + ",\"name\":" + name + "}");
    remember(r, {kBarrierTrack, from, from});
  } else {
    // Instances of one unit may overlap (a DMA queue issues the next transfer while the
    // previous one moves data; an engine issues before the last result is out): each goes
    // to the first of the unit's tracks that is free, so every track nests.
    const int tid = track(r.unit, from, to);
    remember(r, {tid, from, to});
    std::string args = "\"opcode\":" + quoted(p_.kernel->insts[static_cast<size_t>(r.inst)].opcode);
    Picos stall = 0;
    for (Picos s : r.stall) stall += s;
    if (stall > 0) args += ",\"stall_ns\":" + thousandths(stall);
    const bool dma = p_.units[static_cast<size_t>(r.unit)].kind == UnitKind::DmaQueue;
    if (dma) args += ",\"bytes\":" + std::to_string(static_cast<int64_t>(inst.dma.bytes));
    const std::string cat = op_class_name(inst.op_class);
    duration("B", tid, from, name, cat, args);
    // The semaphore that set this start: an arrow from inside the slice that signalled it to
    // the start of this one.
    if (r.binding_channel >= 0 && r.start > r.free) {
      const SimChannel& c = p_.channels[static_cast<size_t>(r.binding_channel)];
      const auto src = signalled_.find({c.src, r.binding_signal});
      if (c.cross_unit && src != signalled_.end()) {
        const Span& s = src->second;
        const int64_t at = std::min(std::max(ns(r.binding_signal) - 1, s.from), s.to);
        const std::string id = std::to_string(next_flow_++);
        event("{\"ph\":\"s\",\"pid\":1,\"tid\":" + std::to_string(s.tid) + ",\"ts\":" + thousandths(at) +
              ",\"id\":" + id + ",\"name\":\"semaphore\",\"cat\":\"sync\"}");
        event("{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":" + std::to_string(tid) + ",\"ts\":" + thousandths(from) +
              ",\"id\":" + id + ",\"name\":\"semaphore\",\"cat\":\"sync\"}");
      }
    }
    // The phases inside the slice: a transfer's fixed cost, its wait for the queue's previous
    // data, its data; an instruction's busy time and the latency until its result is out.
    std::vector<std::pair<const char*, Picos>> phases;  // name, end
    if (dma) {
      const Picos first_byte = r.busy_start - r.stall[static_cast<size_t>(StallReason::Queue)];
      phases = {{"fixed cost", first_byte}, {"queued", r.busy_start}, {"data", r.busy_end}};
    } else if (r.complete > r.busy_end) {
      phases = {{"busy", r.busy_end}, {"latency", r.complete}};
    }
    int64_t at = from;
    for (const auto& [phase, end] : phases) {
      const int64_t until = std::min(ns(end), to);
      if (until > at) {
        duration("B", tid, at, quoted(phase), "phase", "");
        duration("E", tid, until, quoted(phase), "phase", "");
      }
      at = std::max(at, until);
    }
    duration("E", tid, to, name, cat, args);
  }
}

void TraceWriter::remember(const InstanceRecord& r, const Span& span) {
  // A semaphore publishes an instance's start, read end or completion (stream_unit.cpp).
  for (Picos t : {r.start, r.busy_end, r.complete}) signalled_.emplace(std::make_pair(r.inst, t), span);
}

void TraceWriter::finish() {
  write_iteration_markers();
  if (truncated_at_ >= 0)
    event("{\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":0,\"ts\":" + thousandths(ns(truncated_at_)) + ",\"name\":" +
          quoted("trace cut here: --trace-max-bytes " + std::to_string(filter_.max_bytes) + " reached") + "}");
  // Live bytes: a tensor's value is live from the start of its write to the end of its last
  // read before the next write.
  std::stable_sort(accesses_.begin(), accesses_.end(),
                   [](const Access& a, const Access& b) { return a.start < b.start; });
  struct Live {
    bool open = false;
    Picos from = 0, until = 0;
  };
  std::map<int, Live> live;
  std::map<std::string, std::map<int64_t, int64_t>> deltas;  // space -> ns -> bytes
  const Kernel& k = *p_.kernel;
  auto bytes_of = [&](int t) {
    const Tensor& tensor = k.tensors[static_cast<size_t>(t)];
    return partitions_of(k, tensor) * bytes_per_partition(k, tensor);
  };
  auto close = [&](int t, Live& l) {
    if (!l.open) return;
    const std::string& space = k.tensors[static_cast<size_t>(t)].space;
    deltas[space][ns(l.from)] += bytes_of(t);
    deltas[space][ns(std::max(l.until, l.from))] -= bytes_of(t);
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
  // The counters over the time the kept loop instances span (the whole run without a filter):
  // the level when it begins, then each change.
  const bool whole = filter_.empty() || kept_from_ == INT64_MAX;
  const int64_t from = whole ? 0 : ns(kept_from_), to = whole ? INT64_MAX : ns(kept_to_);
  for (const auto& [space, by_time] : deltas) {
    const std::string counter_name = quoted(space + " live bytes");
    auto counter = [&](int64_t t, int64_t level) {
      event("{\"ph\":\"C\",\"pid\":1,\"ts\":" + thousandths(t) + ",\"name\":" + counter_name +
            ",\"args\":{\"bytes\":" + std::to_string(level) + "}}");
    };
    int64_t level = 0;
    bool started = false;
    for (const auto& [t, d] : by_time) {
      if (!whole && t <= from) {
        level += d;
        continue;
      }
      if (!started && !whole) counter(from, level);
      if (t > to) {
        started = true;
        break;
      }
      level += d;
      if (d == 0 && started) continue;  // a value replaced by the next at once
      started = true;
      counter(t, level);
    }
    if (!started && !whole) counter(from, level);
  }
  std::fputs("\n]}\n", out_);
  out_ = nullptr;
  file_.commit();
}

}  // namespace tandem
