"""Sends SIGINT, SIGTERM and SIGHUP to every command while it waits to read its input (a FIFO
that is opened but never written) and prints, per command and signal, how it ended, its
stderr and what it left in $TMPDIR. Usage: stop_line.test.py TANDEM DIR"""
import os
import signal
import subprocess
import sys
import time

tandem, d = sys.argv[1:]
fifo = os.path.join(d, "input")
scratch = os.path.join(d, "tmp")
os.makedirs(scratch, exist_ok=True)
COMMANDS = [["opt", fifo, "--passes=none"], ["sim", fifo], ["ab", fifo, "--a", "none", "--b", "default"],
            ["sweep", fifo, "-o", os.path.join(d, "s.csv")], ["tune", fifo], ["models", "show", fifo],
            ["import-amdgpu", fifo], ["export-amdgpu", fifo, "--asm", os.path.join(d, "k.s")]]
for command in COMMANDS:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if os.path.exists(fifo):
            os.unlink(fifo)
        os.mkfifo(fifo)
        proc = subprocess.Popen([tandem] + command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, TMPDIR=scratch),
                                preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in
                                                    (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)])
        # A writer can open the FIFO without waiting once the command has it open for reading;
        # holding it open without writing keeps the command in its read.
        deadline, writer = time.time() + 60, None
        while writer is None and time.time() < deadline and proc.poll() is None:
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.02)
        if writer is None:
            proc.kill()
            print(f"{command[0]}: never opened its input; stderr {proc.communicate()[1]!r}")
            continue
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        os.close(writer)
        how = f"killed by {signal.Signals(-proc.returncode).name}" if proc.returncode < 0 else f"exit {proc.returncode}"
        print(f"{' '.join(command[:2]) if command[0] == 'models' else command[0]} {signal.Signals(sig).name}: {how}; "
              f"stderr {err!r}; left {sorted(os.listdir(scratch))}")
