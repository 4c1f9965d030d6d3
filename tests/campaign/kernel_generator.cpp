#include "kernel_generator.h"

#include <algorithm>
#include <sstream>

namespace tandem {

namespace {

// splitmix64: a fixed, portable sequence (the standard distributions differ across libraries).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
  bool chance(int percent) { return below(100) < percent; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(below(static_cast<int>(v.size())))];
  }

 private:
  uint64_t s_;
};

std::string str(int64_t v) { return std::to_string(v); }

// A trn kernel: top-level templates (a streaming loop, a PSUM accumulation, a hoisted strip
// with a reduction, a gather, a collective, a scan with several carried values, wide tiles
// that outgrow SBUF together (spilled), an outer loop around sibling inner loops), emitted in
// program order. Tiles are sometimes shared between loops, as users do.
class TrnKernel {
 public:
  TrnKernel(Rng& r, int trip_scale) : r_(r), trip_scale_(trip_scale) {}

  GeneratedKernel build(int64_t index) {
    target_ = r_.chance(70) ? "trn2" : "trn1";
    const int templates = 1 + r_.below(3);
    for (int i = 0; i < templates; ++i) any_template(0);
    std::ostringstream out;
    // `spill`: SBUF spills to DRAM where the tiles live at once outgrow it, as the NKI front
    // end's kernels do (the spill template's).
    out << "kernel @gen" << index << " target = \"" << target_ << "\" {spill} {\n";
    for (const auto& d : decls_) out << "  " << d << "\n";
    out << "\n";
    for (const auto& l : lines_) out << l << "\n";
    out << "}\n";
    GeneratedKernel k;
    k.text = out.str();
    k.shape = target_ + ":" + shape_;
    return k;
  }

 private:
  struct Loop {
    std::string iv;
    int lo, hi;
  };
  struct Tile {
    std::string name;
    std::string space;
    int p, w;
    std::string dtype;
  };

  void emit(const std::string& s) { lines_.push_back(std::string(2 * (loops_.size() + 1), ' ') + s); }
  std::string fresh(const char* prefix) { return "%" + std::string(prefix) + str(uid_++); }
  std::string declare(const std::string& space, const std::vector<int64_t>& dims, const std::string& dtype) {
    const std::string n = fresh(space == "dram" ? "D" : space == "psum" ? "ps" : "t");
    std::string d = "tensor " + n + " : " + space + "[";
    for (size_t i = 0; i < dims.size(); ++i) d += (i ? ", " : "") + str(dims[i]);
    decls_.push_back(d + "] " + dtype);
    return n;
  }
  // An on-chip tile: an existing one of the same shape now and then (a tile shared by loops).
  Tile tile(const std::string& space, int p, int w, const std::string& dtype, bool may_share = true) {
    if (may_share && r_.chance(30)) {
      std::vector<Tile> same;
      for (const Tile& t : tiles_)
        if (t.space == space && t.p == p && t.w == w && t.dtype == dtype) same.push_back(t);
      if (!same.empty()) return r_.pick(same);
    }
    Tile t{declare(space, {p, w}, dtype), space, p, w, dtype};
    tiles_.push_back(t);
    return t;
  }
  // A DRAM tensor holding one [p, w] block per iteration of some enclosing loops (the
  // innermost usually; an output written every iteration at the same place now and then),
  // and the access to this iteration's block.
  std::string dram_block(int p, int w, const std::string& dtype, int vary_percent = 85) {
    std::vector<std::string> terms;
    int64_t stride = w;
    for (size_t i = loops_.size(); i-- > 0;) {
      if (!r_.chance(i + 1 == loops_.size() ? vary_percent : 50)) continue;
      terms.push_back(loops_[i].iv + "*" + str(stride));
      stride *= loops_[i].hi;
    }
    const std::string t = declare("dram", {p, stride}, dtype);
    if (terms.empty()) return t + "[0:" + str(p) + ", 0:" + str(w) + "]";
    std::string lo;
    for (const auto& term : terms) lo += (lo.empty() ? "" : " + ") + term;
    return t + "[0:" + str(p) + ", " + lo + " : " + lo + " + " + str(w) + "]";
  }
  std::string open_loop() {
    const int lo = r_.chance(15) ? 1 : 0;
    const int hi = lo + (2 + r_.below(3)) * trip_scale_;
    const std::string iv = fresh("i");
    emit("loop " + iv + " = " + str(lo) + " to " + str(hi) + (r_.chance(50) ? " {prefetch_one_iteration_ahead}" : "") +
         " {");
    loops_.push_back({iv, lo, hi});
    return iv;
  }
  void close_loop() {
    loops_.pop_back();
    emit("}");
  }
  std::string inst(const char* prefix, const std::string& text) {
    const std::string n = fresh(prefix);
    emit(n + " = " + text);
    return n;
  }
  int width() { return r_.pick(std::vector<int>{128, 256, 512, 1024, 2048, 4096}); }

  void any_template(int depth) {
    int kind = r_.below(depth < 1 ? 10 : 9);
    switch (kind) {
      case 0:
      case 1:
        stream_loop();
        break;
      case 2:
        accumulate_loop();
        break;
      case 3:
        strip_loop();
        break;
      case 4:
        gather_loop();
        break;
      case 5:
        collective_loop();
        break;
      case 6:
        strided_loop();
        break;
      case 7:
        scan_loop();
        break;
      case 8:
        spill_loop();
        break;
      default:
        outer_loop(depth);
        break;
    }
  }

  // Strided accesses (docs/ir.md, Accesses): a tile of twice the width split into its even and
  // odd columns, a strided write into the even ones (which covers nothing) read back whole, and
  // now and then a strided load of every second DRAM column.
  void strided_loop() {
    shape_ += " strided";
    const int w = r_.pick(std::vector<int>{64, 128, 256, 512});
    const std::string p = "128", two = str(2 * w);
    open_loop();
    Tile whole = tile("sbuf", 128, 2 * w, "bf16");
    inst("ld", "load " + whole.name + " <- " + dram_block(128, 2 * w, "bf16"));
    Tile even = tile("sbuf", 128, w, "bf16"), odd = tile("sbuf", 128, w, "bf16");
    inst("ev", "tensor_copy " + even.name + " <- " + whole.name + "[0:" + p + ", 0:" + str(2 * w - 1) + ":2]");
    inst("od", "activation " + odd.name + " <- " + whole.name + "[0:" + p + ", 1:" + two + ":2] {func = \"exp\"}");
    if (r_.chance(50)) {
      inst("sw", "tensor_copy " + whole.name + "[0:" + p + ", 0:" + str(2 * w - 1) + ":2] <- " + odd.name);
      inst("rd", "tensor_copy " + tile("sbuf", 128, 2 * w, "bf16").name + " <- " + whole.name);
    }
    if (r_.chance(50)) {
      const std::string block = dram_block(128, 2 * w, "bf16");  // ends in "]": take every second column
      inst("ls", "load " + even.name + " <- " + block.substr(0, block.size() - 1) + ":2]");
    }
    inst("st", "save " + dram_block(128, w, "bf16") + " <- " + even.name);
    close_loop();
  }

  // Loads, an element-wise chain, a store.
  void stream_loop() {
    shape_ += " stream";
    const int p = r_.chance(80) ? 128 : 64;
    const int w = width();
    const std::string dt = r_.chance(70) ? "bf16" : "f32";
    open_loop();
    std::vector<Tile> loaded;
    const int loads = 1 + r_.below(2);
    for (int i = 0; i < loads; ++i) {
      Tile t = tile("sbuf", p, w, dt);
      inst("ld", "load " + t.name + " <- " + dram_block(p, w, dt));
      loaded.push_back(t);
    }
    Tile cur = loaded[0];
    const int ops = r_.below(3);
    for (int i = 0; i < ops; ++i) {
      Tile out = tile("sbuf", p, w, dt);
      switch (r_.below(4)) {
        case 0:
          inst("c", "tensor_scalar " + out.name + " <- " + cur.name + " {op = \"mul\", scalar = 0.5}");
          break;
        case 1:
          inst("c", "activation " + out.name + " <- " + cur.name + " {func = \"exp\"}");
          break;
        case 2:
          inst("c", "tensor_copy " + out.name + " <- " + cur.name);
          break;
        default:
          inst("c", "tensor_tensor " + out.name + " <- " + cur.name + ", " + loaded.back().name + " {op = \"add\"}");
      }
      cur = out;
    }
    if (ops == 0 || r_.chance(75)) inst("st", "save " + dram_block(p, w, dt) + " <- " + cur.name);
    close_loop();
  }

  // An accumulator zeroed before the loop, accumulated in it (matmul into PSUM, or an SBUF
  // sum), read out after it.
  void accumulate_loop() {
    const bool psum = r_.chance(70);
    shape_ += psum ? " psum-acc" : " sbuf-acc";
    const int w = psum ? r_.pick(std::vector<int>{128, 256, 512}) : width();
    Tile acc = psum ? tile("psum", 128, w, "f32", false) : tile("sbuf", 128, w, "f32");
    if (r_.chance(85)) inst("z", "memset " + acc.name + " {value = 0}");
    Tile a{};
    const bool hoisted = psum && r_.chance(30);
    if (hoisted) {
      a = tile("sbuf", 128, 128, "bf16");
      inst("la", "load " + a.name + " <- " + dram_block(128, 128, "bf16"));
    }
    open_loop();
    if (psum) {
      if (!hoisted) {
        a = tile("sbuf", 128, 128, "bf16");
        inst("la", "load " + a.name + " <- " + dram_block(128, 128, "bf16", 60));
      }
      Tile b = tile("sbuf", 128, w, "bf16");
      inst("lb", "load " + b.name + " <- " + dram_block(128, w, "bf16"));
      inst("mm", "matmul " + acc.name + " <- " + a.name + ", " + b.name + " {accumulate}");
    } else {
      Tile t = tile("sbuf", 128, w, "f32");
      inst("l", "load " + t.name + " <- " + dram_block(128, w, "f32"));
      inst("ad", "tensor_tensor " + acc.name + " <- " + acc.name + ", " + t.name + " {op = \"add\"}");
    }
    close_loop();
    Tile o = tile("sbuf", 128, w, psum ? "bf16" : "f32");
    inst("cp", (r_.chance(50) ? "tensor_copy " : "activation ") + o.name + " <- " + acc.name);
    inst("st", "save " + dram_block(128, w, o.dtype) + " <- " + o.name);
  }

  // A strip loaded before the loop and read in every iteration, a score tile, a column of
  // reductions stored after the loop (attention's shape).
  void strip_loop() {
    shape_ += " strip";
    const int w = r_.pick(std::vector<int>{128, 256, 512});
    Tile q = tile("sbuf", 128, 128, "bf16");
    inst("lq", "load " + q.name + " <- " + dram_block(128, 128, "bf16"));
    const int columns = 8 * trip_scale_;
    Tile l = tile("sbuf", 128, columns, "f32", false);
    const std::string iv = open_loop();
    const int lo = loops_.back().lo;
    Tile kt = tile("sbuf", 128, w, "bf16");
    inst("lk", "load " + kt.name + " <- " + dram_block(128, w, "bf16"));
    Tile s = tile("psum", 128, w, "f32", false);
    inst("qk", "matmul " + s.name + " <- " + q.name + ", " + kt.name);
    Tile p = tile("sbuf", 128, w, "bf16");
    inst("ex", "activation " + p.name + " <- " + s.name + " {func = \"exp\"}");
    const std::string col = lo ? iv + " - " + str(lo) : iv;
    inst("rs", "tensor_reduce " + l.name + "[0:128, " + col + "] <- " + p.name + " {op = \"add\"}");
    close_loop();
    inst("st", "save " + dram_block(128, columns, "f32") + " <- " + l.name);
  }

  // Indices loaded per iteration (or read from DRAM), rows gathered through them.
  void gather_loop() {
    shape_ += " gather";
    const std::string table = declare("dram", {4096, 256}, "bf16");
    const bool sbuf_index = r_.chance(75);
    open_loop();
    std::string index;
    if (sbuf_index) {
      Tile idx = tile("sbuf", 128, 1, "i32");
      inst("li", "load " + idx.name + " <- " + dram_block(128, 1, "i32"));
      index = idx.name;
    } else {
      index = dram_block(128, 1, "i32");
    }
    Tile rows = tile("sbuf", 128, 256, "bf16");
    inst("g", "indirect_load " + rows.name + " <- " + table + ", " + index);
    Tile res = tile("sbuf", 128, 256, "bf16");
    inst("sc", "activation " + res.name + " <- " + rows.name + " {func = \"copy\", scale = 0.125}");
    inst("st", "save " + dram_block(128, 256, "bf16") + " <- " + res.name);
    close_loop();
  }

  // A collective on loaded data beside element-wise work (allreduce's shape).
  void collective_loop() {
    shape_ += " collective";
    const int w = r_.pick(std::vector<int>{256, 1024});
    open_loop();
    Tile g = tile("sbuf", 128, w, "f32");
    inst("lg", "load " + g.name + " <- " + dram_block(128, w, "f32"));
    Tile rr = tile("sbuf", 128, w, "f32");
    inst("ar", "collective_compute " + rr.name + " <- " + g.name + " {op = \"all_reduce\", ranks = 8}");
    if (r_.chance(60)) {
      Tile x = tile("sbuf", 128, w, "bf16");
      inst("lx", "load " + x.name + " <- " + dram_block(128, w, "bf16"));
      Tile y = tile("sbuf", 128, w, "bf16");
      inst("ac", "activation " + y.name + " <- " + x.name + " {func = \"gelu\"}");
      inst("sy", "save " + dram_block(128, w, "bf16") + " <- " + y.name);
    }
    inst("sr", "save " + dram_block(128, w, "f32") + " <- " + rr.name);
    close_loop();
  }

  // Wide f32 tiles that outgrow SBUF together (Mamba's shape at a long sequence): one loaded
  // before the loop and read in every iteration (and after the loop now and then), three made
  // in each iteration and live at once beside it: 4 x 56 KiB per partition of trn2's 208, 4 x
  // 48 of trn1's 176. Spilling the one from before the loop brings them back to three.
  void spill_loop() {
    shape_ += " spill";
    const int w = target_ == "trn2" ? 14336 : 12288;
    Tile keep = tile("sbuf", 128, w, "f32", false);
    inst("lk", "load " + keep.name + " <- " + dram_block(128, w, "f32"));
    open_loop();
    Tile a = tile("sbuf", 128, w, "f32", false);
    inst("la", "load " + a.name + " <- " + dram_block(128, w, "f32"));
    Tile b = tile("sbuf", 128, w, "f32", false);
    inst("tb", "tensor_tensor " + b.name + " <- " + a.name + ", " + keep.name + " {op = \"multiply\"}");
    Tile c = tile("sbuf", 128, w, "f32", false);
    inst("tc", "tensor_tensor " + c.name + " <- " + b.name + ", " + a.name + " {op = \"add\"}");
    inst("st", "save " + dram_block(128, w, "f32") + " <- " + c.name);
    close_loop();
    if (r_.chance(50)) {
      Tile e = tile("sbuf", 128, w, "f32", false);
      inst("te", "activation " + e.name + " <- " + keep.name + " {func = \"exp\"}");
      inst("se", "save " + dram_block(128, w, "f32") + " <- " + e.name);
    }
  }

  // A scan with two or three values carried from one iteration to the next (Mamba's shape):
  // each state is updated from itself and the state before it (the first from the loaded
  // input), and the last is stored every iteration or once after the loop.
  void scan_loop() {
    shape_ += " scan";
    const int w = r_.pick(std::vector<int>{128, 512, 2048});
    const int carried = 2 + r_.below(2);
    std::vector<Tile> state;
    for (int i = 0; i < carried; ++i) {
      state.push_back(tile("sbuf", 128, w, "f32", false));
      inst("z", "memset " + state.back().name + " {value = 0}");
    }
    open_loop();
    Tile x = tile("sbuf", 128, w, "f32");
    inst("lx", "load " + x.name + " <- " + dram_block(128, w, "f32"));
    for (int i = 0; i < carried; ++i) {
      const std::string& other = i ? state[i - 1].name : x.name;
      const char* op = r_.chance(50) ? "mul" : "add";
      inst("sc", "tensor_tensor " + state[i].name + " <- " + state[i].name + ", " + other + " {op = \"" + op + "\"}");
    }
    if (r_.chance(40)) {  // the first state also reads the last one: a cycle through all of them
      inst("fb",
           "tensor_tensor " + state[0].name + " <- " + state[0].name + ", " + state.back().name + " {op = \"add\"}");
    }
    const bool store_inside = r_.chance(60);
    if (store_inside) inst("st", "save " + dram_block(128, w, "f32") + " <- " + state.back().name);
    close_loop();
    if (!store_inside) inst("st", "save " + dram_block(128, w, "f32") + " <- " + state.back().name);
  }

  // An outer loop entering one or two inner loops (each inner loop is entered more than once).
  void outer_loop(int depth) {
    shape_ += " outer(";
    open_loop();
    const int inner = 1 + r_.below(2);
    for (int i = 0; i < inner; ++i) any_template(depth + 1);
    close_loop();
    shape_ += " )";
  }

  Rng& r_;
  const int trip_scale_;
  std::vector<std::string> decls_, lines_;
  std::vector<Loop> loops_;
  std::vector<Tile> tiles_;
  int uid_ = 0;
  std::string shape_;
  std::string target_;
};

// A gpu-cu WMMA loop (the shape of workloads/gpu/wmma_loop.kir): A operands either
// prefetched (a preheader load, and a body load of the next iteration's after its last
// reader) or loaded before their reader;
// loads through the advanced register, another register or the loop variable; an optional
// advance, wait, shared A operand, loaded B operand, epilogue and live-out A registers; now
// and then an outer loop around it.
GeneratedKernel gpu_kernel(Rng& r, int64_t index) {
  GeneratedKernel k;
  k.gpu = true;
  const int n = 2 + r.below(3);
  k.wmmas = n;
  const bool advance = r.chance(85);
  const int stride = r.chance(50) ? 256 : 512;
  const bool outer = r.chance(15);
  std::vector<int> a_of(n);  // A operand group per WMMA
  int groups = 0;
  for (int i = 0; i < n; ++i) a_of[i] = (i > 0 && r.chance(25)) ? a_of[i - 1] : groups++;
  std::vector<bool> prefetched(groups);
  std::vector<std::string> addr_reg(groups, "v10");
  for (int g = 0; g < groups; ++g) {
    prefetched[g] = r.chance(60);
    if (r.chance(12)) addr_reg[g] = "v11";
  }
  auto a_regs = [](int g) { return "v[" + str(20 + 4 * g) + ":" + str(23 + 4 * g) + "]"; };
  auto c_regs = [](int i) { return "v[" + str(100 + 8 * i) + ":" + str(107 + 8 * i) + "]"; };
  std::ostringstream body;
  std::string ind = outer ? "    " : "  ";
  std::string live = "v[100:" + str(107 + 8 * (n - 1)) + "]";
  std::string shape = "gpu:";
  if (r.chance(20)) {
    live += ", " + a_regs(0);
    shape += " live-A";
  }
  std::ostringstream out;
  out << "kernel @gen" << index << " target = \"gpu-cu\" {live_out = \"" << live << "\"} {\n";
  out << "  tensor %lds : lds[65536] u8\n\n";
  if (outer) {
    out << "  loop %o = 0 to 2 {\n";
    shape += " outer";
  }
  for (int g = 0; g < groups; ++g)
    if (prefetched[g])
      out << ind << "%p" << g << " = ds_load_b128 " << a_regs(g) << " <- %lds[" << addr_reg[g] << " + " << 32 * g
          << "]\n";
  const int lo = r.chance(15) ? 1 : 0;
  out << ind << "loop %k = " << lo << " to " << lo + 2 + r.below(4);
  if (advance) out << " {advance = \"v10 += " << stride << "\"}";
  out << " {\n";
  const std::string in = ind + "  ";
  if (r.chance(20)) {
    out << in << "%lb = ds_load_b128 v[60:63] <- %lds[v10 + 2048]\n";
    shape += " B-loaded";
  }
  std::vector<int> last_reader(groups, -1);
  for (int i = 0; i < n; ++i) last_reader[a_of[i]] = i;
  std::vector<bool> loaded(groups, false);
  for (int i = 0; i < n; ++i) {
    const int g = a_of[i];
    if (!prefetched[g] && !loaded[g]) {
      loaded[g] = true;
      const int how = r.below(100);
      std::string addr = how < 70   ? addr_reg[g] + " + " + str(32 * g)
                         : how < 85 ? "v11 + " + str(32 * g)
                                    : "%k*64 + 4096";
      if (how >= 85) shape += " iv-address";
      out << in << "%l" << g << " = ds_load_b128 " << a_regs(g) << " <- %lds[" << addr << "]\n";
    }
    out << in << "%w" << i << " = v_wmma_f32_16x16x32_bf16 " << c_regs(i) << " <- " << a_regs(g) << ", v[60:63], "
        << c_regs(i) << " {a_tile = " << g << ", b_tile = 0}\n";
    if (prefetched[g] && last_reader[g] == i) {
      // the next iteration's operand, after its last reader; a mismatched offset now and then
      const int delta = r.chance(8) ? stride / 2 : stride;
      out << in << "%n" << g << " = ds_load_b128 " << a_regs(g) << " <- %lds[" << addr_reg[g] << " + " << delta + 32 * g
          << "]\n";
    }
    if (i == 0 && r.chance(15)) out << in << "%wait = s_waitcnt {lgkmcnt = 0}\n";
  }
  out << ind << "}\n";
  if (r.chance(30)) {
    for (int g = 0; g < groups; ++g)
      if (prefetched[g]) {
        out << ind << "%e" << g << " = v_wmma_f32_16x16x32_bf16 v[100:107] <- " << a_regs(g)
            << ", v[60:63], v[100:107]\n";
        shape += " epilogue";
        break;
      }
  }
  if (outer) out << "  }\n";
  out << "}\n";
  k.text = out.str();
  k.shape = shape + " n=" + str(n) + (advance ? "" : " no-advance");
  return k;
}

}  // namespace

GeneratedKernel generate_kernel(uint64_t seed, int64_t index, int trip_scale) {
  Rng r(seed * 0x100000001b3ULL + static_cast<uint64_t>(index));
  r.next();
  // One kernel in three is a GPU WMMA loop.
  if (index % 3 == 2) return gpu_kernel(r, index);
  TrnKernel k(r, trip_scale);
  return k.build(index);
}

std::vector<std::string> pipelines_for(const GeneratedKernel& k) {
  std::vector<std::string> p = {"none", "default", "auto", "list-schedule", "list-schedule{priority=program-order}"};
  for (const char* q : {"0", "1", "3"})
    for (const char* pol : {"first", "balance"})
      p.push_back(std::string("assign-engines{queues=") + q + ",policy=" + pol + "}");
  if (k.gpu) {
    // every mode with every distance; explicit orders: reversed and rotated by one
    std::string reversed, rotated;
    for (int i = 0; i < k.wmmas; ++i) {
      reversed += (i ? ":" : "") + str(k.wmmas - 1 - i);
      rotated += (i ? ":" : "") + str((i + 1) % k.wmmas);
    }
    for (const std::string& mode : std::vector<std::string>{
             "mode=vgpr", "mode=reverse", "mode=explicit,order=" + reversed, "mode=explicit,order=" + rotated})
      for (const char* d : {"-1", "0", "1", "2", "3"}) p.push_back("wmma-reorder{" + mode + ",distance=" + d + "}");
    for (const char* d : {"-1", "1", "2"})
      p.push_back(std::string("wmma-reorder{mode=reverse,distance=") + d + "},list-schedule");
    p.push_back("list-schedule,wmma-reorder{mode=reverse,distance=1}");
    p.push_back("wmma-reorder{mode=reverse,distance=1},wmma-reorder{mode=reverse,distance=2}");
    p.push_back("wmma-reorder,default");
    return p;
  }
  for (const char* s : {"", "{memset}", "{post-ada}", "{memset,post-ada}"})
    p.push_back(std::string("separate-load-compute") + s);
  for (const char* o : {"cc-dma-alignment=1", "force-incoming-order=0", "force-incoming-order=65536"})
    p.push_back(std::string("prefetch-schedule{") + o + "}");
  p.push_back("prefetch-schedule");
  for (const char* s : {"sbuf", "psum"})
    for (const char* b : {"auto", "2", "3", "4"})
      p.push_back(std::string("address-rotation{space=") + s + ",buffers=" + b + "}");
  for (const char* a : {"{after}", "{after,cc-dma-alignment=2}", "{after,prefetch-distance=1}"})
    p.push_back(std::string("prefetch-schedule") + a);
  // The default chain with its options varied.
  auto chain = [](const std::string& pre, const std::string& slc, const std::string& ls, const std::string& rot,
                  const std::string& after, bool post_ada) {
    return pre + "separate-load-compute" + slc + ",list-schedule" + ls + "," + rot + ",prefetch-schedule{after" +
           after + "}" + (post_ada ? ",separate-load-compute{post-ada}" : "");
  };
  for (const char* b : {"auto", "2", "3", "4"})
    for (const char* d : {"0", "1", "2", "3"})
      p.push_back(chain("prefetch-schedule,", "{memset}", "", std::string("address-rotation{buffers=") + b + "}",
                        std::string(",prefetch-distance=") + d, true));
  for (const char* d : {"0", "1", "2", "3"})
    p.push_back(chain("", "", "", "address-rotation{buffers=4}", std::string(",prefetch-distance=") + d, false));
  p.push_back(
      chain("prefetch-schedule{cc-dma-alignment=1},", "{memset}", "", "address-rotation", ",cc-dma-alignment=2", true));
  p.push_back(chain("", "{memset}", "", "address-rotation", ",cc-dma-alignment=1", true));
  p.push_back(chain("prefetch-schedule{force-incoming-order=0},", "", "", "address-rotation", "", true));
  p.push_back(chain("prefetch-schedule{force-incoming-order=65536},", "", "", "address-rotation{buffers=2}",
                    ",prefetch-distance=1", true));
  p.push_back(chain("", "", "{priority=program-order}", "address-rotation", ",prefetch-distance=1", true));
  p.push_back(chain("", "{memset}", "", "address-rotation{space=psum,buffers=2}", "", true));
  p.push_back(
      chain("", "", "", "address-rotation{buffers=3},address-rotation{space=psum}", ",prefetch-distance=2", true));
  p.push_back("separate-load-compute,list-schedule");
  p.push_back("separate-load-compute{post-ada},list-schedule");
  p.push_back("separate-load-compute,list-schedule,address-rotation{buffers=2}");
  p.push_back(
      "separate-load-compute{memset},list-schedule,address-rotation,prefetch-schedule{after,prefetch-distance=1}");
  p.push_back("separate-load-compute,separate-load-compute{post-ada}");
  p.push_back("address-rotation,separate-load-compute,list-schedule");
  p.push_back("list-schedule,separate-load-compute{post-ada}");
  p.push_back("default,assign-engines{policy=balance}");
  p.push_back("assign-engines{queues=1},default");
  p.push_back("default,default");
  return p;
}

}  // namespace tandem
