"""Loops: what `nl.affine_range` and `nl.sequential_range` return (`LoopRange`).

A loop's body runs once, with a symbolic index, inside one `.kir` loop; a loop that Python
needs the index of runs concretely instead, one pass of the body per iteration, and is rolled
back into one loop where the iterations agree (`tandem.reroll`). A body that carries a tile
to the next iteration through a Python variable makes its loop concrete.
"""

from .active import current, fail
from .context import Context
from .errors import loop_name, user_frame, user_location
from .indices import Sym, describe, is_int, wrap
from .ir import Affine, Loop
from .reroll import Iterations, NeedsConcrete, loop_key
from .tiles import Tile


class LoopRange:
    """What `nl.affine_range` / `nl.sequential_range` return: iterating yields the loop index once."""

    def __init__(self, kind: str, start, stop, step):
        if stop is None:
            start, stop = 0, start
        for what, v in (("start", start), ("stop", stop), ("step", step)):
            if not is_int(v):
                if isinstance(v, Sym):
                    fail(f"loop {what} {v!r} depends on an enclosing loop index: .kir loop bounds are constants",
                         call=f"nl.{kind}")
                try:
                    v = int(v.__index__())
                except Exception:
                    fail(f"loop {what} must be an integer, found {describe(v)}", call=f"nl.{kind}")
        if step == 0:
            fail("loop step 0", call=f"nl.{kind}")
        self.kind, self.start, self.stop, self.step = kind, int(start), int(stop), int(step)
        self.trip = max(0, -(-(self.stop - self.start) // self.step))
        self.loc = user_location()

    def __len__(self):
        return self.trip

    def __iter__(self):
        ctx = current(f"nl.{self.kind}")
        if self.trip == 0:
            return iter(())
        return self._run(ctx)

    def _run(self, ctx: Context):
        if loop_key(self.loc) in ctx.concrete:
            yield from self._run_concretely(ctx)
            return
        loop = ctx.open_loop(self.trip, self.kind, self.loc)
        before = _tile_locals(user_frame())
        finished = False
        try:
            yield wrap(Affine.of(loop, self.step, self.start)) if self.trip > 1 else self.start
            finished = True
            _check_rebinding(loop, before, _tile_locals(user_frame()), self.kind)
        except GeneratorExit:
            # `break` or `return` in the body: as in NKI's own tracing, the body as far as it ran
            # stands for every iteration.
            ctx.notes.append(f"{self.loc}: the body of loop %{loop.name} leaves it early (break or return); it is "
                             "traced as far as it runs, for every iteration")
        finally:
            if ctx.loops and ctx.loops[-1] is loop:
                ctx.close_loop(loop)
        if finished and len(loop.body) == 0:
            pass  # an empty loop prints nothing


    def _run_concretely(self, ctx: Context):
        """One pass of the body per iteration, with the index's value; rolled back into one
        loop when the iterations agree (tandem.reroll)."""
        its = Iterations(ctx, self, loop_name(self.loc) or "i")
        try:
            for i in range(self.trip):
                its.begin()
                yield self.start + i * self.step
                its.end()
        except GeneratorExit:  # `break` or `return`: the iterations that ran, as Python runs them
            its.end()
            ctx.notes.append(f"{self.loc}: a loop is left early (break or return) after {len(its.blocks)} "
                             "iterations")
        its.finish()


def _tile_locals(frame):
    if frame is None:
        return {}
    return {name: v.buf for name, v in frame.f_locals.items() if isinstance(v, Tile)}


def _check_rebinding(loop: Loop, before, after, kind):
    """A variable that held a tile the body read, rebound in the body to a tile the body made,
    carries a value from one iteration to the next through Python: the traced body (run once)
    would read the old tile in every iteration, so the loop runs concretely (tandem.reroll)."""
    for name, buf in after.items():
        old = before.get(name)
        if old is not None and buf is not old and loop in buf.loops and loop in old.read_loops:
            raise NeedsConcrete([loop_key(loop.loc)])  # each iteration reads the previous one's tile
