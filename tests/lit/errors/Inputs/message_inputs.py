"""Writes the inputs of message_format.test into DIR: files whose text, echoed in an error,
holds control characters (CR, VT, a CR after a YAML escape's backslash, a tab, bytes that are
not UTF-8) or a value of 1,000 to 40,000 characters. Usage: message_inputs.py DIR ROOT (ROOT: the repository)."""
import os
import re
import sys

out, root = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
hand = open(os.path.join(root, "tests", "models", "hand.yaml")).read()
gemm = os.path.join(root, "workloads", "trn", "gemm_k.kir")
wmma = os.path.join(root, "workloads", "gpu", "wmma_loop.kir")
long = "w" * 5000


def write(name, text):
    with open(os.path.join(out, name), "w", newline="") as f:
        f.write(text)


def sweep(kernels, pipeline="none", extra=""):
    return (f"kernels: {kernels}\nmodel: trn2\nparameters:\n  pipeline: [{pipeline}]\nmetrics: [total_ns]\n"
            + extra)


# Control characters.
write("cr.yaml", sweep(gemm, extra="verify\r: true\n"))
write("cr.kir", open(gemm).read().replace('target = "trn2"', 'target = "trn2\r"'))
write("vt.yaml", hand.replace("reference_clock_ghz: 1.0", "reference_clock_ghz: 1.0\nlatency\x0b: 1"))
write("escape.yaml", hand.replace("name: hand", 'name: "hand\\\r"'))
# Long values: a sweep's pipeline, a model field, opcode class, engine and cost-formula
# variable, a kernel's target and a sweep's kernel pattern.
write("pipeline.yaml", sweep(wmma, '"wmma-reorder{mode=re' + "[" * 40000 + 'verse}"'))
write("field.yaml", hand.replace("reference_clock_ghz: 1.0", f"reference_clock_ghz: 1.0\n{long[:1000]}: 1"))
write("class.yaml", hand.replace("{class: load,", f"{{class: {long},"))
write("engine.yaml", hand.replace("{class: compute, engines: [pe]}", f"{{class: compute, engines: [{long}]}}"))
write("variable.yaml", hand.replace('matmul: "N_moving"', f'matmul: "{long}"'))
write("target.kir", open(gemm).read().replace('target = "trn2"', f'target = "{long}"'))
write("pattern.yaml", sweep(os.path.join(out, long)))
# A model name with a tab, and one with bytes that are not UTF-8: the trace's JSON still parses.
write("tab.yaml", re.sub(r"(?m)^name: trn2$", 'name: "trn2\\tX"', open(os.path.join(root, "models", "trn2.yaml")).read()))
with open(os.path.join(out, "latin1.yaml"), "wb") as f:
    f.write(re.sub(rb"(?m)^name: trn2$", b"name: trn2\xe9\x01", open(os.path.join(root, "models", "trn2.yaml"),
                                                                         "rb").read()))
