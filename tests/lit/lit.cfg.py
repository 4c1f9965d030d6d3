# lit configuration for Tandem's command-line tests. Each test file starts with prose saying
# what it checks; RUN lines use %tandem, %workloads and %models.
import os
import lit.formats

config.name = "tandem"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".kir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "expect_error.py", "expect_exit.py", "check_trace.py", "check_layout.py",
                   "check_report.py", "with_reader.py", "interrupt.py", "kir_equal.py"]

config.substitutions.append(("%tandem", config.tandem_bin))
config.substitutions.append(("%workloads", os.path.join(config.source_root, "workloads")))
config.substitutions.append(("%models", os.path.join(config.source_root, "models")))
config.substitutions.append(("%testmodels", os.path.join(config.source_root, "tests", "models")))
config.substitutions.append(("FileCheck", config.filecheck))
config.substitutions.append(("%expect-error", "python3 " + os.path.join(config.test_source_root, "expect_error.py")))
config.substitutions.append(("%expect-exit", "python3 " + os.path.join(config.test_source_root, "expect_exit.py")))
config.substitutions.append(("%check-layout", "python3 " + os.path.join(config.test_source_root, "check_layout.py")))
config.substitutions.append(("%check-trace", "python3 " + os.path.join(config.test_source_root, "check_trace.py")))
config.substitutions.append(("%with-reader", "python3 " + os.path.join(config.test_source_root, "with_reader.py")))
config.substitutions.append(("%interrupt", "python3 " + os.path.join(config.test_source_root, "interrupt.py")))

# `REQUIRES: mknod` tests make their own character device (as root, where the container allows it).
import stat
import tempfile
with tempfile.TemporaryDirectory() as d:
    try:
        os.mknod(os.path.join(d, "null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        config.available_features.add("mknod")
    except OSError:
        pass
config.environment["SYSTEMC_DISABLE_COPYRIGHT_MESSAGE"] = "1"
# A TANDEM_SANITIZE build: the sanitizers' options (suppressions, exit codes) reach every run.
for var in ("ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# `REQUIRES: chromium` tests load HTML reports in headless Chromium (scripts/setup installs it).
import shutil
if shutil.which("chromium"):
    config.available_features.add("chromium")
config.substitutions.append(("%check-report", "python3 " + os.path.join(config.test_source_root, "check_report.py")))

# `REQUIRES: trace-viewer` tests open a trace in speedscope (tests/viewer, installed by scripts/setup).
viewer = os.path.join(config.source_root, "tests", "viewer")
if shutil.which("chromium") and shutil.which("node") and all(
        os.path.isdir(os.path.join(viewer, "node_modules", m)) for m in ("speedscope", "playwright-core")):
    config.available_features.add("trace-viewer")
config.substitutions.append(("%check-viewer", "node " + os.path.join(viewer, "check_viewer.mjs")))

# `REQUIRES: mpi` tests run `%mpirun N ...` (more ranks than cores allowed; root allowed, as CI runs as root).
if config.mpirun:
    config.available_features.add("mpi")
    config.substitutions.append(("%mpirun", config.mpirun + " --oversubscribe --allow-run-as-root -n"))

# `REQUIRES: amdgpu-toolchain` tests compile gfx1100 kernels with clang-16 and assemble them with
# llvm-mc-16 (scripts/setup installs both; docs/amdgpu.md).
if shutil.which("clang-16") and shutil.which("llvm-mc-16"):
    config.available_features.add("amdgpu-toolchain")
config.substitutions.append(("%clang-gfx1100-hip", "clang-16 -x hip --offload-arch=gfx1100 -nogpulib -nogpuinc --cuda-device-only -O2 -S"))
config.substitutions.append(("%clang-gfx1100", "clang-16 -target amdgcn-amd-amdhsa -mcpu=gfx1100 -nogpulib -O2 -S"))
config.substitutions.append(("%llvm-mc-gfx1100", "llvm-mc-16 -triple=amdgcn-amd-amdhsa -mcpu=gfx1100"))
config.substitutions.append(("%kir-equal", "python3 " + os.path.join(config.test_source_root, "kir_equal.py")))
