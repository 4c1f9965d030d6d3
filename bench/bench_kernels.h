// What the benchmarks share: generated kernels and the growth exponent they report.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace tandem::bench {

// An unrolled GEMM of about `instructions` instructions: loads of A and B into 8 tile pairs,
// an accumulating matmul, and every 64 steps the PSUM evacuated by an activation and saved;
// straight-line or as the body of one loop of 4 iterations.
inline std::string unrolled_gemm(int64_t instructions, bool in_loop) {
  std::ostringstream s;
  s << "kernel @bench target = \"trn2\" {\n"
    << "  tensor %A : dram[128, 1048576] bf16\n  tensor %B : dram[1048576, 512] bf16\n"
    << "  tensor %C : dram[128, 512] bf16\n  tensor %acc : psum[128, 512] f32\n"
    << "  tensor %o : sbuf[128, 512] bf16\n";
  for (int t = 0; t < 8; ++t)
    s << "  tensor %a" << t << " : sbuf[128, 128] bf16\n  tensor %b" << t << " : sbuf[128, 128] bf16\n";
  if (in_loop) s << "  loop %r = 0 to 4 {\n";
  int64_t emitted = 0;
  for (int64_t j = 0; emitted < instructions; ++j) {
    const int t = static_cast<int>(j % 8);
    const int64_t col = (j * 128) % 1048576;
    s << "  load %a" << t << " <- %A[0:128, " << col << ":" << col + 128 << "]\n";
    s << "  load %b" << t << " <- %B[" << col << ":" << col + 128 << ", 0:128]\n";
    s << "  matmul %acc[0:128, 0:128] <- %a" << t << ", %b" << t << " {accumulate}\n";
    emitted += 3;
    if (j % 64 == 63) {
      s << "  activation %o[0:128, 0:128] <- %acc[0:128, 0:128]\n  save %C[0:128, 0:128] <- %o[0:128, 0:128]\n";
      emitted += 2;
    }
  }
  if (in_loop) s << "  }\n";
  s << "}\n";
  return s.str();
}

// Least-squares slope of log y over log x, over the points with y > 0 (a size over its time
// limit has none): the growth exponent. NaN with fewer than two such points.
inline double growth_exponent(const std::vector<double>& x, const std::vector<double>& y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int m = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (!(y[i] > 0)) continue;
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, ++m;
  }
  if (m < 2) return NAN;
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

// The benchmarks' positional counts, `defaults` for those not given. `-h`/`--help` prints
// `usage` and exits 0; an argument that is not a positive integer, or one too many, prints
// what is wrong and `usage` to stderr and exits 1 (a count read as 0 ran a kernel of nothing).
// `args` are the `count` arguments after the program's name (and any subcommand).
inline std::vector<int64_t> positional_counts(const char* program, int count, char** args, const char* usage,
                                              std::vector<int64_t> defaults) {
  for (int i = 0; i < count; ++i) {
    const std::string arg = args[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(args[i], &end, 10);
    const size_t at = static_cast<size_t>(i);
    if (at >= defaults.size() || end == args[i] || *end != '\0' || errno != 0 || v <= 0) {
      std::fprintf(stderr, "%s: %s '%s'\n%s", program,
                   at >= defaults.size() ? "unexpected argument" : "expected a positive integer, got", args[i], usage);
      std::exit(1);
    }
    defaults[at] = v;
  }
  return defaults;
}

}  // namespace tandem::bench
