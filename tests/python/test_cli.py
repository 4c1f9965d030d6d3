"""tandem-nki: trace a kernel file to .kir from the shell."""
import os
import subprocess
import sys

import tandem


def run(root, *args):
    script = os.path.join(root, "python", "tandem-nki")
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def test_writes_the_traced_kir(root, tmp_path):
    import matmul

    out = tmp_path / "mm.kir"
    p = run(root, f"{root}/workloads/nki/matmul.py:matmul_tiled", "--shapes", "1024x512,1024x1024,512x1024",
            "--dtype", "bf16", "-o", str(out))
    assert p.returncode == 0, p.stderr
    expected = tandem.trace(matmul.matmul_tiled, (1024, 512), (1024, 1024), (512, 1024)).text
    assert out.read_text() == expected


def test_outputs_that_are_not_regular_files(root, tmp_path):
    """-o writes as the binary does: a FIFO (and /dev/null) is written through, never replaced
    by a regular file; a symbolic link keeps pointing at the file it names; a directory or a
    missing directory is one error line, exit 1, and nothing is left behind."""
    import threading

    kernel = [f"{root}/workloads/nki/softmax.py:softmax", "--shapes", "256x512"]
    fifo = tmp_path / "pipe.kir"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    p = run(root, *kernel, "-o", str(fifo))
    reader.join(60)
    assert p.returncode == 0, p.stderr
    assert fifo.is_fifo() and got and got[0].startswith("kernel @softmax")
    target, link = tmp_path / "target.kir", tmp_path / "link.kir"
    link.symlink_to(target)
    assert run(root, *kernel, "-o", str(link)).returncode == 0
    assert link.is_symlink() and target.read_text().startswith("kernel @softmax")
    for bad, why in ((tmp_path, "it is a directory"), (tmp_path / "missing" / "k.kir", "No such file or directory")):
        p = run(root, *kernel, "-o", str(bad))
        assert p.returncode == 1 and p.stderr.splitlines() == [f"tandem-nki: error: cannot write {bad}: {why}"
                                                                + (" (outputs go to regular files, character "
                                                                   "devices or FIFOs)" if bad == tmp_path else "")]
    assert sorted(os.listdir(tmp_path)) == ["link.kir", "pipe.kir", "target.kir"]


def test_scalars_lengths_dtypes_and_params_to_stdout(root):
    p = run(root, f"{root}/workloads/nki/layernorm.py:layernorm", "--shapes", "256x512:f32,1e-5,512,512",
            "--dtype", "f32", "--no-src", "--name", "ln")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith('kernel @ln target = "trn2" {')
    assert "tensor %gamma_vector : dram[512] f32" in p.stdout and "src =" not in p.stdout
    p = run(root, f"{root}/workloads/nki/matmul.py:matmul_hoisted_unrolled", "--shapes",
            "1024x512,1024x1024,512x1024", "--param", "UNROLL=2")
    assert p.returncode == 0, p.stderr
    assert "%rhs_tiles.t_2" in p.stdout and "%rhs_tiles.t_3" not in p.stdout


def test_simulate(root):
    p = run(root, f"{root}/workloads/nki/softmax.py:softmax", "--shapes", "256x512", "--simulate", "--passes=none")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("kernel @softmax on trn2: ")


def test_located_trace_error_exits_1(root, tmp_path):
    src = tmp_path / "bad_kernel.py"
    src.write_text("import tandem.nki.language as nl\n\n\ndef k(X):\n    x = nl.load(X)\n    nl.fancy(x)\n")
    p = run(root, f"{src}:k", "--shapes", "128x64")
    assert p.returncode == 1
    assert p.stderr.strip() == f"{src}:6:5: error: nl.fancy: nl.fancy is not supported by the tandem tracer " \
                               "(docs/python.md lists what is)"
    assert p.stdout == ""


def test_usage_errors_exit_2(root):
    p = run(root, f"{root}/workloads/nki/softmax.py:nope", "--shapes", "256x512")
    assert p.returncode == 2 and "has no function 'nope'" in p.stderr
    p = run(root, f"{root}/workloads/nki/softmax.py:softmax", "--shapes", "256xq")
    assert p.returncode == 2 and "is not a shape" in p.stderr
    # A shape with a dimension that is not positive is the option's error, not the launcher's.
    p = run(root, f"{root}/workloads/nki/softmax.py:softmax", "--shapes", "0x512")
    assert p.returncode == 2 and "--shapes item '0x512': every dimension of a shape must be positive" in p.stderr
    assert "tandem-nki:" not in p.stderr.split("error:")[0].replace("tandem-nki: ", "")


def test_arguments_that_do_not_match_the_kernel_are_located(root):
    """--shapes with too many or too few items, or a --param the kernel does not take: one
    line at the kernel's definition, exit 1."""
    for args, why in ((["--shapes", "1024x1024,1024x1024"], "too many positional arguments"),
                      (["--shapes", "1024x1024", "--param", "UNROLL=2"], "unexpected keyword argument 'UNROLL'")):
        p = run(root, f"{root}/workloads/nki/softmax.py:softmax", *args)
        assert p.returncode == 1
        line = p.stderr.strip()
        assert "\n" not in line and "Traceback" not in line
        assert line.startswith(f"{root}/workloads/nki/softmax.py:13:1: error: softmax: the kernel's arguments "
                               "do not match its parameters (a_tensor): ") and line.endswith(why)


LONG_KERNEL = """from tandem import nki
import tandem.nki.language as nl
@nki.jit
def k(a, trips):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(trips):
        nl.store(out, value=nl.exp(nl.load(a)))
    return out
"""


def test_signals_stop_the_simulation_and_leave_nothing(root, tmp_path):
    """SIGINT, SIGTERM or SIGHUP to tandem-nki alone (Ctrl-C, a job runner stopping it): its
    `tandem sim` child stops too, its temporary directory goes, and it exits 128 + the signal
    with one line."""
    import signal
    import time

    src = tmp_path / "k.py"
    src.write_text(LONG_KERNEL)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        p = subprocess.Popen([sys.executable, os.path.join(root, "python", "tandem-nki"), f"{src}:k", "--shapes",
                              "128x512,int:1000000000", "--simulate"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=dict(os.environ, TMPDIR=str(scratch)),
                             # a runner that ignores SIGINT (a background job) would pass that on
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.time() + 60
        children = []
        while not children and time.time() < deadline:
            time.sleep(0.2)
            children = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
        assert children, "tandem sim never started"
        p.send_signal(signum)
        _, err = p.communicate(timeout=60)
        assert p.returncode == 128 + signum
        assert err.strip() == f"tandem-nki: stopped by {signal.Signals(signum).name}"
        time.sleep(0.5)
        assert not any(os.path.exists(f"/proc/{c}") and "tandem" in open(f"/proc/{c}/cmdline").read()
                       for c in children), "the tandem sim child outlived tandem-nki"
        assert list(scratch.iterdir()) == []
