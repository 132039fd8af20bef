"""The Table III blocks with :mod:`rlmcost.blocks`' own names and signatures, numerically.

A drop-in for ``rlmcost.blocks`` in code that evaluates a block on a numeric model: each
function reads the generated form in ``blocks_gen`` by the head, attention counting or MLA
decode convention it is given, and the byte forms multiply elements by the dtype's bytes as
the symbolic ones do. Exact Python ints (tests compare every function with its symbolic
source on dense, MoE and MLA models). The building-blocks report
(:mod:`rlmcost.reports.blocks`) evaluates its one table of definitions against this module
for ``rlmcost blocks --model`` and against ``rlmcost.blocks`` for ``--symbolic``.
"""

from __future__ import annotations

from typing import Any

from rlmcost.choices import AttnCounting, Dtype, Head, MlaDecode
from rlmcost.compiled import blocks_gen as g
from rlmcost.compiled.arch import arch_numbers


def _counted(name: str, counting: AttnCounting, head: Head | None = None) -> Any:
    suffix = f"_{Head(head).value}" if head is not None else ""
    return getattr(g, f"{name}_{AttnCounting(counting).value}{suffix}")


def params(arch: Any, head: Head = Head.LM) -> int:
    return int(getattr(g, f"params_{Head(head).value}")(arch_numbers(arch)))


def params_active_per_token(arch: Any) -> int:
    return int(g.params_active_per_token(arch_numbers(arch)))


def memory_params_bytes(arch: Any, dtype: Dtype = Dtype.BF16, head: Head = Head.LM) -> int:
    return params(arch, head) * dtype.bytes


def work_forward(
    arch: Any,
    seqs: int,
    seq: int,
    counting: AttnCounting = AttnCounting.FULL,
    head: Head = Head.LM,
) -> int:
    return int(_counted("work_forward", counting, head)(arch_numbers(arch), seqs, seq))


def work_backward(
    arch: Any,
    seqs: int,
    seq: int,
    counting: AttnCounting = AttnCounting.FULL,
    head: Head = Head.LM,
) -> int:
    return int(_counted("work_backward", counting, head)(arch_numbers(arch), seqs, seq))


def work_train(
    arch: Any,
    seqs: int,
    seq: int,
    counting: AttnCounting = AttnCounting.FULL,
    head: Head = Head.LM,
) -> int:
    return int(_counted("work_train", counting, head)(arch_numbers(arch), seqs, seq))


def work_prefill(
    arch: Any, prompt: int, seqs: int = 1, counting: AttnCounting = AttnCounting.FULL
) -> int:
    return int(_counted("work_prefill", counting)(arch_numbers(arch), prompt, seqs))


def work_decode_step(
    arch: Any, context: int, seqs: int = 1, mla: MlaDecode = MlaDecode.ABSORBED
) -> int:
    fn = g.work_decode_step_reference if mla is MlaDecode.REFERENCE else g.work_decode_step
    return int(fn(arch_numbers(arch), context, seqs))


def work_rollout(
    arch: Any,
    prompt: int,
    response: int,
    counting: AttnCounting = AttnCounting.FULL,
    mla: MlaDecode = MlaDecode.ABSORBED,
) -> int:
    if mla is not MlaDecode.ABSORBED:
        raise NotImplementedError("the compiled rollout is the absorbed MLA form")
    return int(_counted("work_rollout", counting)(arch_numbers(arch), prompt, response))


def memory_kv_cache(arch: Any, tokens: int) -> int:
    return int(g.memory_kv_cache(arch_numbers(arch), tokens))


def memory_kv_cache_bytes(arch: Any, tokens: int, dtype: Dtype = Dtype.BF16) -> int:
    return memory_kv_cache(arch, tokens) * dtype.bytes


def memory_activations_paper(arch: Any, tokens: int) -> int:
    return int(g.memory_activations_paper(arch_numbers(arch), tokens))


def memory_activations_bytes(arch: Any, tokens: int, dtype: Dtype = Dtype.BF16) -> int:
    return int(g.memory_activations_bytes(arch_numbers(arch), tokens, dtype.bytes))


def memory_inference_buffer(arch: Any, tokens: int) -> int:
    return int(g.memory_inference_buffer(arch_numbers(arch), tokens))


def memory_inference_buffer_bytes(arch: Any, tokens: int, dtype: Dtype = Dtype.BF16) -> int:
    return memory_inference_buffer(arch, tokens) * dtype.bytes


def memory_logits(arch: Any, tokens: int) -> int:
    return int(g.memory_logits(arch_numbers(arch), tokens))


def memory_logits_bytes(arch: Any, tokens: int, dtype: Dtype = Dtype.FP32) -> int:
    return memory_logits(arch, tokens) * dtype.bytes


def memory_adam_states(n_params: int) -> int:
    return 4 * n_params


def memory_adam_states_bytes_rajbhandari2020(n_params: int) -> int:
    return 16 * n_params


def depth_forward(arch: Any, context: int, head: Head = Head.LM) -> int:
    return int(getattr(g, f"depth_forward_{Head(head).value}")(arch_numbers(arch), context))


def depth_backward(arch: Any, context: int, tokens: int, head: Head = Head.LM) -> int:
    fn = getattr(g, f"depth_backward_{Head(head).value}")
    return int(fn(arch_numbers(arch), context, tokens))


def depth_generation(arch: Any, prompt: int, response: int, closed_form: bool = True) -> int:
    fn = g.depth_generation if closed_form else g.depth_generation_bound
    return int(fn(arch_numbers(arch), prompt, response))
