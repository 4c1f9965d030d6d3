"""Folds an `nl.zeros(..., buffer=nl.psum)` into the matmuls that accumulate into it.

The tracer writes the zeroing as a memset, which costs engine time hardware does not spend:
a matmul starts a fresh accumulation group itself (`{accumulate, start = "%k"}`, docs/ir.md).
The memset goes, and the matmul gets `start` on loop `%k`, when the first write into the
zeroed tile in each group is provably that matmul:

- the memset is an `nl.zeros` fill (an explicit `nisa.memset` stays) of a PSUM tile with 0;
- the next item after it in its block that touches the tensor is loop `%k`, and the first
  instruction inside `%k` (program order, nested loops included) that touches the tensor is an
  accumulating matmul directly in `%k`'s body writing exactly the memset's region, which does
  not move with `%k` (then every execution of the block zeroes once and starts one group).

A matmul straight after the memset (no loop between) loses `accumulate` instead: it overwrites.
Anything else keeps the memset, but for a placeholder: an `nl.ndarray` PSUM tile is traced as
zeroed, so that the first matmul into it overwrites as NKI infers (`accumulate=None`), and the
placeholder that folds into no matmul goes (the matmuls accumulate onto what the tile holds).
"""

from typing import List, Optional, Union

from .ir import FLAG, Instruction, Kernel, Loop, Tensor, expr_loops
from .printer import access


def _touches(item: Union[Instruction, Loop], t: Tensor) -> bool:
    if isinstance(item, Loop):
        return any(_touches(x, t) for x in item.body)
    return any(a.tensor is t for a in item.writes + item.reads)


def _first_toucher(block, t: Tensor) -> Optional[Union[Instruction, Loop]]:
    return next((x for x in block if _touches(x, t)), None)


def _folds_into(ms: Instruction, mm: Instruction) -> bool:
    """`mm` is an accumulating matmul writing exactly what `ms` zeroed, and nothing else."""
    return (mm.opcode == "matmul" and mm.has_attr("accumulate") and not mm.has_attr("start")
            and len(mm.writes) == 1 and access(mm.writes[0]) == access(ms.writes[0]))


def _moves_with(inst: Instruction, loop: Loop) -> bool:
    return any(l is loop for a in inst.writes for i in a.index for e in (i.lo, i.hi) for l in expr_loops(e))


def _fold_block(block: List[Union[Instruction, Loop]]):
    i = 0
    while i < len(block):
        item = block[i]
        if isinstance(item, Loop):
            _fold_block(item.body)
        elif item.fill and item.opcode == "memset" and dict(item.attrs).get("value") == 0 \
                and len(item.writes) == 1 and item.writes[0].tensor.space == "psum":
            t = item.writes[0].tensor
            nxt = _first_toucher(block[i + 1:], t)
            if isinstance(nxt, Loop):
                mm = _first_toucher(nxt.body, t)
                if isinstance(mm, Instruction) and _folds_into(item, mm) and not _moves_with(mm, nxt):
                    mm.attrs.insert(mm.attrs.index(("accumulate", FLAG)) + 1, ("start", "%" + nxt.name))
                    del block[i]
                    continue
            elif isinstance(nxt, Instruction) and _folds_into(item, nxt):
                nxt.attrs.remove(("accumulate", FLAG))
                del block[i]
                continue
        i += 1


def fold_psum_zeros(kernel: Kernel):
    """Drops each foldable `nl.zeros` memset in place, then the placeholders left (see the
    module's docstring)."""
    _fold_block(kernel.body)
    _drop_placeholders(kernel.body)


def _drop_placeholders(block: List[Union[Instruction, Loop]]):
    block[:] = [x for x in block if not (isinstance(x, Instruction) and x.placeholder)]
    for x in block:
        if isinstance(x, Loop):
            _drop_placeholders(x.body)
