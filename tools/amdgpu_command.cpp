// tandem import-amdgpu and export-amdgpu: gfx11 assembly in and out (docs/amdgpu.md).
#include <iostream>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "sched/amdgpu/exporter.h"
#include "sched/amdgpu/importer.h"
#include "sched/analysis/translation_validator.h"
#include "sched/ir/parser.h"
#include "sched/support/error.h"
#include "sched/support/output.h"
#include "tools/commands.h"
#include "tools/output.h"

namespace tandem::cli {

namespace {

struct ImportArgs {
  std::string file;
  std::string out;
  bool stats = false;
};

struct ExportArgs {
  std::string file;
  std::string asm_file;
  std::string out;
  bool stats = false;
};

// The importer's .kir read back: an error here is the importer's, not the user's.
Kernel read_back(const std::string& kir, const std::string& name) {
  try {
    return parse_kernel(kir, name);
  } catch (const Error& e) {
    throw std::logic_error("import-amdgpu wrote a kernel it cannot read: " + format_error(e));
  }
}

int run_import(const ImportArgs& a) {
  const std::string text = read_input_file(a.file, "assembly file");
  const amdgpu::AsmKernel k = amdgpu::analyse_asm(text, a.file);
  const std::string kir = amdgpu::kir_text(k);
  read_back(kir, a.out.empty() ? "<import-amdgpu>" : a.out);
  if (a.stats) std::cerr << amdgpu::describe(amdgpu::import_stats(k));
  emit(kir, a.out);
  return 0;
}

std::string describe(const amdgpu::ExportStats& s) {
  return "loops_changed: " + std::to_string(s.loops_changed) + "\nlines_moved: " + std::to_string(s.lines_moved) +
         "\noffsets_changed: " + std::to_string(s.offsets_changed) +
         "\npreheader_added: " + std::to_string(s.preheader_added) +
         "\npreheader_removed: " + std::to_string(s.preheader_removed) +
         "\nhints_dropped: " + std::to_string(s.hints_dropped) +
         "\ndelays_dropped: " + std::to_string(s.delays_dropped) +
         "\nwaitcnts_inserted: " + std::to_string(s.waitcnts.inserted) +
         "\nwaitcnts_tightened: " + std::to_string(s.waitcnts.tightened) +
         "\nvmcnt_waits_inserted: " + std::to_string(s.waitcnts.vm_inserted) +
         "\nvmcnt_waits_tightened: " + std::to_string(s.waitcnts.vm_tightened) +
         "\nnops_dropped: " + std::to_string(s.nops_dropped) + "\nnops_inserted: " + std::to_string(s.nops_inserted) +
         "\n";
}

// The exported text imported again must be the kernel that was exported: the same
// statements (names aside), computing the same (the translation validator).
void check_round_trip(const Kernel& kernel, const std::string& exported, const std::string& asm_file) {
  const amdgpu::AsmKernel again = amdgpu::analyse_asm(exported, asm_file);
  const Kernel back = read_back(amdgpu::kir_text(again), "<export-amdgpu>");
  const std::string diff = amdgpu::structural_difference(kernel, back);
  if (!diff.empty()) throw std::logic_error("export-amdgpu: the exported assembly reads back differently: " + diff);
  if (std::optional<std::string> d = find_translation_difference(kernel, back))
    throw std::logic_error("export-amdgpu: the exported assembly computes something else: " + *d);
}

int run_export(const ExportArgs& a) {
  const Kernel kernel = parse_kernel_file(a.file);
  const std::string text = read_input_file(a.asm_file, "assembly file");
  amdgpu::ExportStats stats;
  const std::string exported = amdgpu::export_amdgpu(kernel, text, a.asm_file, stats);
  check_round_trip(kernel, exported, a.asm_file);
  if (a.stats) std::cerr << describe(stats);
  emit(exported, a.out);
  return 0;
}

}  // namespace

void add_amdgpu_commands(CLI::App& root, int& exit_code) {
  auto in = std::make_shared<ImportArgs>();
  CLI::App* imp = root.add_subcommand(
      "import-amdgpu", "Read gfx11 assembly (as LLVM emits it for gfx1100) into a .kir kernel for the gfx1100 model.");
  imp->footer(
      "\nLoops are single-block counted loops (s_cmp + s_cbranch_scc back to their label); what is not modelled "
      "stays an opaque instruction of its latency class (docs/amdgpu.md).");
  imp->add_option("file", in->file, "assembly file (.s)")->required();
  imp->add_option("-o,--output", in->out, "write the kernel here (atomically) instead of stdout");
  imp->add_flag("--stats", in->stats,
                "print to stderr what became of every instruction: modelled, folded into a loop, or opaque");
  imp->callback([in, &exit_code] { exit_code = run_import(*in); });

  auto out = std::make_shared<ExportArgs>();
  CLI::App* exp = root.add_subcommand(
      "export-amdgpu", "Write an imported (and reordered) kernel back into the assembly file it came from.");
  exp->footer(
      "\nEvery line is kept as written except reordered loop bodies, migrated ds_load offsets, added and removed "
      "preheader ds_loads and s_waitcnt lgkmcnt counts (docs/amdgpu.md).");
  exp->add_option("file", out->file, "kernel in the .kir text format, imported by import-amdgpu")->required();
  exp->add_option("--asm", out->asm_file, "the assembly file the kernel was imported from")->required();
  exp->add_option("-o,--output", out->out, "write the assembly here (atomically) instead of stdout");
  exp->add_flag("--stats", out->stats, "print to stderr what the export changed: moved lines, offsets, waits");
  exp->callback([out, &exit_code] { exit_code = run_export(*out); });
}

}  // namespace tandem::cli
