#!/usr/bin/env python3
"""The installed tree, twice: `cmake --install` into a temporary prefix, and the Debian package
`cpack -G DEB` builds, unpacked into a temporary root. From an unrelated directory, with
nothing of the checkout on the paths, each must:
- hold the binary, tandem-nki, every module of the Python package, every model, every workload
  file of the checkout, the docs and LICENSE, the bash completion and the man page;
- run --version, `models show trn2` (naming the installed model file), `sim` of an installed
  workload (naming the model file and hash it read), and let TANDEM_MODELS_DIR take over;
- run every `$ build/bin/tandem ...` example of the installed README and docs/usage.md
  (EXAMPLE_PAGES), printing the lines the page shows, and usage.md's Python example, printing
  what its `# prints:` lines say;
- run the installed tandem-nki, and import the installed package, which finds the installed
  binary by itself;
- complete `tandem sim --pro` to `--profile --progress` with the installed completion.
The package must declare the shared libraries it needs and python3-numpy.
Usage: check_install.py CMAKE BUILD_DIR SOURCE_DIR"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

PYTHON = "/usr/bin/python3"  # Debian's: it sees python3-numpy and python3-pandas
# The installed pages (share/doc/tandem/) whose `$ build/bin/tandem` examples run, and the page
# whose Python example runs.
EXAMPLE_PAGES = ("README.md", "usage.md")
PYTHON_EXAMPLE_PAGE = "usage.md"


def run(cmd, cwd, env=None, input=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, input=input)
    if p.returncode != 0:
        sys.exit(f"check_install: {' '.join(cmd)} exited {p.returncode}\n{p.stdout}{p.stderr}")
    return p.stdout


def expect(cond, msg):
    if not cond:
        sys.exit("check_install: " + msg)


def clean_env(prefix):
    """No checkout, build tree or override on any path: only the installed tree and the system."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("TANDEM_MODELS_DIR", "TANDEM_BIN", "PYTHONPATH")}
    env["PATH"] = os.path.join(prefix, "bin") + ":/usr/bin:/bin"
    env["MPLBACKEND"] = "Agg"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def check_files(prefix, source):
    share = os.path.join(prefix, "share", "tandem")
    for f in ("bin/tandem", "bin/tandem-nki", "lib/python3/dist-packages/tandem/__init__.py",
              "lib/python3/dist-packages/tandem/nki/language.py", "share/doc/tandem/LICENSE",
              "share/doc/tandem/README.md", "share/doc/tandem/usage.md", "share/doc/tandem/metrics.md",
              "share/doc/tandem/glossary.md", "share/man/man1/tandem.1",
              "share/bash-completion/completions/tandem"):
        expect(os.path.isfile(os.path.join(prefix, f)), f"{f} is not installed in {prefix}")
    package = os.path.join(prefix, "lib", "python3", "dist-packages", "tandem")
    for folder, installed in (("models", os.path.join(share, "models")), ("workloads", os.path.join(share, "workloads")),
                              (os.path.join("python", "tandem"), package)):
        top = os.path.join(source, folder)
        for root, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for f in files:
                rel = os.path.relpath(os.path.join(root, f), top)
                expect(os.path.isfile(os.path.join(installed, rel)), f"{folder}/{rel} is not installed")


def check_binary(prefix, elsewhere, env):
    tandem = os.path.join(prefix, "bin", "tandem")
    share = os.path.join(prefix, "share", "tandem")
    version = run([tandem, "--version"], elsewhere, env)
    expect(re.fullmatch(r"tandem \d+\.\d+\.\d+ \(git ([0-9a-f]{7,}|unknown)\)\n", version) is not None,
           f"--version printed {version!r}")
    shown = run([tandem, "models", "show", "trn2"], elsewhere, env)
    model = os.path.join(share, "models", "trn2.yaml")
    expect(shown.startswith(f"model trn2: {model} (fnv1a64:"), f"models show names another file:\n{shown}")
    expect(re.search(r"^matmul +compute +pe", shown, re.M) is not None, f"models show lacks matmul on pe:\n{shown}")

    kernel = os.path.join(share, "workloads", "trn", "gemm_k.kir")
    out = run([tandem, "sim", kernel, "--passes=default"], elsewhere, env)
    m = re.search(r"^model file (\S+) \((fnv1a64:[0-9a-f]{16})\), pipeline default, tandem ", out, re.M)
    expect(m is not None and m.group(1) == model, f"the summary does not name {model}:\n{out}")
    installed_hash = m.group(2)
    # TANDEM_MODELS_DIR comes before the installed models: an edited copy is the one read.
    mine = os.path.join(elsewhere, "models")
    os.makedirs(mine, exist_ok=True)
    shutil.copy(model, mine)
    with open(os.path.join(mine, "trn2.yaml"), "a") as f:
        f.write("# edited\n")
    out = run([tandem, "sim", kernel, "--passes=default"], elsewhere, dict(env, TANDEM_MODELS_DIR=mine))
    m = re.search(r"^model file (\S+) \((fnv1a64:[0-9a-f]{16})\)", out, re.M)
    expect(m is not None and m.group(1) == os.path.join(mine, "trn2.yaml") and m.group(2) != installed_hash,
           f"TANDEM_MODELS_DIR was not used:\n{out}")
    man = run(["man", "-l", os.path.join(prefix, "share", "man", "man1", "tandem.1")], elsewhere,
              dict(env, MANPAGER="cat", MANWIDTH="100"))
    expect("tandem sim" in man and "--hw-a" in man, "the man page lacks the sim and ab commands")


def page_examples(page):
    """(command, the output lines the page shows for it) for each `$ build/bin/tandem` line."""
    examples, current = [], None
    in_block = False
    for line in open(page):
        line = line.rstrip("\n")
        if line.startswith("```"):
            in_block = not in_block
            current = None
            continue
        if not in_block:
            continue
        if line.startswith("$ build/bin/tandem "):
            current = (line[2:], [])
            examples.append(current)
        elif current is not None and line.strip() and line.strip() != "..." and not line.startswith("  ..."):
            current[1].append(line)
    return examples


def normalised(line):
    return " ".join(line.split())


def check_examples(prefix, elsewhere, env):
    share = os.path.join(prefix, "share", "tandem")
    docs = os.path.join(prefix, "share", "doc", "tandem")
    examples = []
    for page in EXAMPLE_PAGES:
        found = page_examples(os.path.join(docs, page))
        expect(len(found) >= 1, f"found no `$ build/bin/tandem` example in the installed {page}")
        examples += [(page, command, shown) for command, shown in found]
    expect(len(examples) >= 5, f"found {len(examples)} examples in {', '.join(EXAMPLE_PAGES)}")
    for page, command, shown in examples:
        installed = command.replace("build/bin/tandem", os.path.join(prefix, "bin", "tandem"))
        installed = installed.replace(" workloads/", " " + share + "/workloads/")
        out = run(["bash", "-c", installed], elsewhere, env)
        lines = [normalised(x) for x in out.split("\n")]
        at = 0
        for want in shown:
            w = normalised(want)
            # A shown line matches an output line, or its start when the page cuts a long line.
            found = next((i for i in range(at, len(lines)) if lines[i] == w or lines[i].startswith(w.rstrip("."))), None)
            expect(found is not None, f"{page} example `{command}` does not print `{want}`:\n{out}")
            at = found + 1
    # The Python example, with the package and the example kernels from the installed tree.
    text = open(os.path.join(docs, PYTHON_EXAMPLE_PAGE)).read()
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    wanted = [normalised(x) for x in re.findall(r"^# (?:prints:| {7})\s*(.*)$", block, re.M)]
    code = "\n".join(x for x in block.split("\n") if not x.startswith("#"))
    pyenv = dict(env, PYTHONPATH=os.path.join(prefix, "lib", "python3", "dist-packages") + ":" +
                 os.path.join(share, "workloads", "nki"))
    out = run([PYTHON, "-c", code], elsewhere, pyenv)
    expect([normalised(x) for x in out.strip().split("\n")] == wanted,
           f"the Python example of {PYTHON_EXAMPLE_PAGE} printed\n{out}\nnot\n" + "\n".join(wanted))
    found = run([PYTHON, "-c", "import tandem; print(tandem.find_binary())"], elsewhere, pyenv).strip()
    expect(found == os.path.join(prefix, "bin", "tandem"), f"the installed package found {found}")


def check_nki_and_completion(prefix, elsewhere, env):
    share = os.path.join(prefix, "share", "tandem")
    kir = os.path.join(elsewhere, "mm.kir")
    run([os.path.join(prefix, "bin", "tandem-nki"), os.path.join(share, "workloads", "nki", "matmul.py") + ":matmul_tiled",
         "--shapes", "1024x512,1024x1024,512x1024", "-o", kir], elsewhere, env)
    out = run([os.path.join(prefix, "bin", "tandem-nki"), os.path.join(share, "workloads", "nki", "softmax.py") + ":softmax",
               "--shapes", "256x512", "--simulate"], elsewhere, env)
    expect("kernel @softmax on trn2:" in out, f"tandem-nki --simulate printed\n{out}")
    expect(open(kir).read().startswith("kernel @matmul_tiled"), "tandem-nki wrote no kernel")
    completion = os.path.join(prefix, "share", "bash-completion", "completions", "tandem")
    script = ('source /usr/share/bash-completion/bash_completion; source "$1"; '
              'COMP_WORDS=(tandem sim --pro); COMP_CWORD=2; COMP_LINE="tandem sim --pro"; COMP_POINT=${#COMP_LINE}; '
              '_tandem; echo "${COMPREPLY[@]}"')
    out = run(["bash", "-c", script, "complete", completion], elsewhere, env).strip()
    expect(out == "--profile --progress", f"completion of `tandem sim --pro` gave {out!r}")


def check_tree(prefix, source):
    check_files(prefix, source)
    env = clean_env(prefix)
    with tempfile.TemporaryDirectory() as elsewhere:
        check_binary(prefix, elsewhere, env)
        check_examples(prefix, elsewhere, env)
        check_nki_and_completion(prefix, elsewhere, env)


def main(cmake, build, source):
    with tempfile.TemporaryDirectory() as prefix:
        run([cmake, "--install", build, "--prefix", prefix], cwd=prefix)
        check_tree(prefix, source)
    print("cmake --install: the installed tree runs from another directory")
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as root:
        cpack = os.path.join(os.path.dirname(cmake), "cpack")
        run([cpack, "--config", os.path.join(build, "CPackConfig.cmake"), "-G", "DEB", "-B", out], cwd=out)
        debs = [f for f in os.listdir(out) if f.endswith(".deb")]
        expect(len(debs) == 1, f"cpack made {debs}")
        deb = os.path.join(out, debs[0])
        depends = run(["dpkg-deb", "-f", deb, "Depends"], out)
        for needed in ("libsystemc", "libyaml-cpp", "python3-numpy"):
            expect(needed in depends, f"the package does not depend on {needed}: {depends}")
        run(["dpkg-deb", "-x", deb, root], out)
        check_tree(os.path.join(root, "usr"), source)
    print(f"{debs[0]}: unpacked, the tree runs from another directory; Depends: {depends.strip()}")


if __name__ == "__main__":
    main(*sys.argv[1:])
