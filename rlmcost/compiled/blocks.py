"""The Table III blocks with :mod:`rlmcost.blocks`' own names and signatures, numerically.

A drop-in for ``rlmcost.blocks`` in code that evaluates a block on a numeric model: each
function reads the generated form in ``blocks_gen`` by the head, attention counting or MLA
decode convention it is given, and the byte forms multiply elements by the dtype's bytes as
the symbolic ones do. Exact: ints, or Fractions where a size is fractional (a PRM prefix);
tests compare every function with its symbolic source on dense, MoE and MLA models.

Its users: the numeric invocation cost (:mod:`rlmcost.compiled.invocation`), the rollout
timeline, the placement model, and the building-blocks report (:mod:`rlmcost.reports.blocks`),
whose one table of definitions is evaluated against this module for ``rlmcost blocks --model``
and against ``rlmcost.blocks`` for ``--symbolic``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from rlmcost.choices import AttnCounting, Dtype, Head, MlaDecode
from rlmcost.compiled import blocks_gen as g
from rlmcost.compiled.arch import arch_numbers
from rlmcost.memo import memoized

Num = int | Fraction
"""An exact size or count: an int, or a Fraction (e.g. a PRM prefix's length)."""


def _exact(x: Any) -> Any:
    """A generated block's value: an ``int`` when whole, else its exact ``Fraction``."""
    return x.numerator if isinstance(x, Fraction) and x.denominator == 1 else x


def _counted(name: str, counting: AttnCounting, head: Head | None = None) -> Any:
    suffix = f"_{Head(head).value}" if head is not None else ""
    return getattr(g, f"{name}_{AttnCounting(counting).value}{suffix}")


@memoized()
def params(arch: Any, head: Head = Head.LM) -> int:
    return _exact(getattr(g, f"params_{Head(head).value}")(arch_numbers(arch)))


def params_active_per_token(arch: Any) -> int:
    return _exact(g.params_active_per_token(arch_numbers(arch)))


def memory_params_bytes(arch: Any, dtype: Dtype = Dtype.BF16, head: Head = Head.LM) -> int:
    return params(arch, head) * dtype.bytes


def work_head_per_token(arch: Any, head: Head = Head.LM) -> int:
    return _exact(getattr(g, f"work_head_per_token_{Head(head).value}")(arch_numbers(arch)))


def _teacher_forced(name: str) -> Any:
    """``blocks.<name>(arch, seqs, seq, counting, head)`` for a teacher-forced pass."""

    def block(
        arch: Any,
        seqs: Num,
        seq: Num,
        counting: AttnCounting = AttnCounting.FULL,
        head: Head = Head.LM,
    ) -> Num:
        return _exact(_counted(name, counting, head)(arch_numbers(arch), seqs, seq))

    block.__name__ = block.__qualname__ = name
    block.__doc__ = f"``rlmcost.blocks.{name}``, compiled (exact; a Fraction for a fractional seq)."
    return block


work_forward = _teacher_forced("work_forward")
work_backward = _teacher_forced("work_backward")
work_train = _teacher_forced("work_train")


@memoized()
def work_prefill(
    arch: Any, prompt: Num, seqs: Num = 1, counting: AttnCounting = AttnCounting.FULL
) -> Num:
    return _exact(_counted("work_prefill", counting)(arch_numbers(arch), prompt, seqs))


def work_decode_step(
    arch: Any, context: Num, seqs: Num = 1, mla: MlaDecode = MlaDecode.ABSORBED
) -> Num:
    fn = g.work_decode_step_reference if mla is MlaDecode.REFERENCE else g.work_decode_step
    return _exact(fn(arch_numbers(arch), context, seqs))


def work_rollout(
    arch: Any,
    prompt: Num,
    response: Num,
    counting: AttnCounting = AttnCounting.FULL,
    mla: MlaDecode = MlaDecode.ABSORBED,
) -> Num:
    if mla is not MlaDecode.ABSORBED:
        raise NotImplementedError("the compiled rollout is the absorbed MLA form")
    return _exact(_counted("work_rollout", counting)(arch_numbers(arch), prompt, response))


def memory_kv_cache(arch: Any, tokens: Num, seqs: Num = 1) -> Num:
    return _exact(g.memory_kv_cache(arch_numbers(arch), tokens, seqs))


def memory_kv_cache_bytes(
    arch: Any, tokens: Num, dtype: Dtype = Dtype.BF16, seqs: Num = 1
) -> Num:
    return memory_kv_cache(arch, tokens, seqs) * dtype.bytes


def memory_activations_paper(arch: Any, tokens: Num) -> Num:
    return _exact(g.memory_activations_paper(arch_numbers(arch), tokens))


def memory_activations_bytes(arch: Any, tokens: Num, dtype: Dtype = Dtype.BF16) -> Num:
    return _exact(g.memory_activations_bytes(arch_numbers(arch), tokens, dtype.bytes))


def memory_inference_buffer(arch: Any, tokens: Num) -> Num:
    return _exact(g.memory_inference_buffer(arch_numbers(arch), tokens))


def memory_inference_buffer_bytes(arch: Any, tokens: Num, dtype: Dtype = Dtype.BF16) -> Num:
    return memory_inference_buffer(arch, tokens) * dtype.bytes


def memory_logits(arch: Any, tokens: Num) -> Num:
    return _exact(g.memory_logits(arch_numbers(arch), tokens))


def memory_logits_bytes(arch: Any, tokens: Num, dtype: Dtype = Dtype.FP32) -> Num:
    return memory_logits(arch, tokens) * dtype.bytes


def memory_adam_states(n_params: int) -> int:
    return 4 * n_params


def memory_adam_states_bytes_rajbhandari2020(n_params: int) -> int:
    return 16 * n_params


def depth_forward(arch: Any, context: Num, head: Head = Head.LM) -> Num:
    return _exact(getattr(g, f"depth_forward_{Head(head).value}")(arch_numbers(arch), context))


def depth_backward(arch: Any, context: Num, tokens: Num, head: Head = Head.LM) -> Num:
    fn = getattr(g, f"depth_backward_{Head(head).value}")
    return _exact(fn(arch_numbers(arch), context, tokens))


def depth_train(arch: Any, context: Num, tokens: Num, head: Head = Head.LM) -> Num:
    fn = getattr(g, f"depth_train_{Head(head).value}")
    return _exact(fn(arch_numbers(arch), context, tokens))


def depth_generation(arch: Any, prompt: Num, response: Num, closed_form: bool = True) -> Num:
    fn = g.depth_generation if closed_form else g.depth_generation_bound
    return _exact(fn(arch_numbers(arch), prompt, response))
