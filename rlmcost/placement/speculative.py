"""A generation group's speculative decoding: the draft's costs and memory beside the model's.

The engine's ``speculative_tokens`` N > 0 (:class:`~rlmcost.deployment.spec.EngineSpec`) makes
every decode step of the rollout timeline an engine step of N draft passes and one
verification over N + 1 positions per sequence (:mod:`rlmcost.perf.speculative`):

* FLOPs per engine step for ``a`` sequences whose contexts sum to ``C``: the target's decode at
  the N + 1 positions c, c + 1, ..., c + N of each sequence, sum_i (f0 + f1 (c + i)) =
  (N + 1) f0 + f1 N (N + 1) / 2 + (N + 1) f1 c (``blocks.work_decode_step``, linear in the
  context), plus N draft steps of (f0' + f1' c) each, f0' with the MTP projection's
  4 d^2 (:attr:`~rlmcost.perf.speculative.Speculation.projection_flops_per_token`); exact
  ints, per engine step;
* bytes per device: the model's weights once (one verification forward), the draft's weights
  N times (one pass per draft token), the KV cache of the model once and the draft's N times;
* tokens per engine step ``1 + sum P^i`` (:attr:`DecodeCost.tokens_per_step`), which the
  timeline divides each step's seconds by.

Memory: the draft's weights in the engine (the MTP block: one decoder layer of the model's last
layer's shape and its [d, 2d] projection; embedding and head shared with the model, vLLM
``v1/spec_decode/eagle.py``; a draft model: all of it), the draft's KV cache per sequence (the
MTP block's layer, vLLM allocating it beside the model's), and the N draft positions of each
sequence in the KV cache (vLLM reserves them in the paged blocks: ``num_lookahead_tokens``,
``v1/core/kv_cache_manager.py`` ``allocate_slots``).

The paper's idealized iteration (``deployment.ideal``) decodes one token per step.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.arch import Arch
from rlmcost.compiled.blocks import work_prefill
from rlmcost.compiled.memory import memory_per_rank
from rlmcost.deployment.group_engine import group_engine
from rlmcost.errors import SpecError
from rlmcost.parallel.breakdown import MemoryBreakdown, Mode
from rlmcost.perf.speculative import (
    MTP,
    MTP_ACCEPTANCE,
    Speculation,
    expected_tokens_per_step,
    mtp_arch,
)
from rlmcost.placement.inputs import engine_for
from rlmcost.placement.rollout import DecodeCost, decode_flops

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment
    from rlmcost.placement.device_groups import Task
    from rlmcost.placement.group_own import GroupTasks
    from rlmcost.specs.model import ModelSpec


def speculation_for(g: GroupTasks, task: Task) -> Speculation | None:
    """The speculation the group's engine runs ``task``'s generation with; None for a task
    that does not generate (only generation reads the engine: ``group_key``) and for a judge's
    verdicts: ``--speculative-tokens`` is the policy's rollout engine's (verl's
    ``actor_rollout_ref.model.mtp``, NeMo RL's ``policy.generation.vllm_kwargs``), not that of
    a reward model served beside it."""
    if task.kind is not Kind.GENERATE or task.role is not Role.ACTOR or g.s.deployment.ideal:
        return None
    engine = engine_for(g.s, g.group.name)
    if not engine.speculative_tokens:
        return None
    arch = g.s.arch(task.role)
    if engine.speculative_draft == MTP:
        _has_mtp(g.s.specs[task.role])
        p = engine.speculative_acceptance
        return Speculation(engine.speculative_tokens, MTP_ACCEPTANCE if p is None else p,
                           mtp_arch(arch))  # fmt: skip
    draft = draft_spec(engine.speculative_draft).arch()
    assert engine.speculative_acceptance is not None  # EngineSpec requires it
    return Speculation(engine.speculative_tokens, engine.speculative_acceptance, draft, False)


def draft_spec(name: str) -> ModelSpec:
    """The draft model ``name`` (``--speculative-draft``) names; its SpecError names the flag
    and the value, as a role's model does (``--critic 'x': unknown model ...``)."""
    from rlmcost.specs.registry import get_model

    try:
        return get_model(name)
    except SpecError as exc:
        raise SpecError(f"--speculative-draft {name!r}: {exc}") from None


def _has_mtp(spec: ModelSpec) -> None:
    """A SpecError unless ``spec``'s checkpoint ships a multi-token-prediction module (config
    ``num_nextn_predict_layers`` / ``mtp_num_hidden_layers``: vLLM's MTP methods load it from
    the checkpoint, vllm/model_executor/models/deepseek_mtp.py; a model without one has no
    draft to run)."""
    if not spec.mtp_layers:
        raise SpecError(
            f"--speculative-draft mtp: {spec.name}'s checkpoint has no multi-token-prediction "
            "layer (config num_nextn_predict_layers 0); give a draft model with "
            "--speculative-draft NAME --speculative-acceptance P, or no --speculative-tokens"
        )


def _draft_bytes(g: GroupTasks, task: Task, spec: Speculation, sequences: int) -> tuple[int, int]:
    """(weights, KV cache) bytes per device of the draft in the engine's layout (TP/EP as the
    model's, one pipeline stage), for ``sequences`` sequences over the engine's data ranks.
    The MTP block's weights: one layer's (a two-layer and a one-layer model of its shape,
    differenced, so the shared embedding and head drop out) plus its replicated [d, 2d]
    projection in the engine's weight dtype."""
    layout = g.layouts[task.index].one_stage()
    wl, seq = g.workload(task), g.seq_len(task)

    def mem(arch: Arch) -> MemoryBreakdown:
        return memory_per_rank(arch, layout, Mode.GENERATE, sequences, seq, wl)

    one = mem(spec.draft)
    if not spec.mtp:
        return one.weights, one.kv_cache
    d = int(spec.draft.d_model)
    layer = mem(spec.draft.with_(n_layers=2)).weights - one.weights
    return layer + 2 * d * d * wl.weight_dtype.bytes, one.kv_cache


def draft_weight_bytes(g: GroupTasks, task: Task) -> int:
    """The draft's weight bytes per device in ``task``'s engine (0 without speculation): the
    trainer never holds them (Megatron trains no MTP layer in NeMo RL's DeepSeek-V3 recipes,
    ``mtp_num_layers 0``; a draft model is not trained), so a refit or reshard leaves them."""
    spec = speculation_for(g, task)
    if spec is None:
        return 0
    return _draft_bytes(g, task, spec, g.layouts[task.index].dp)[0]


def with_draft(g: GroupTasks, task: Task, m: MemoryBreakdown, sequences: int) -> MemoryBreakdown:
    """``m`` (the engine's generation bytes per device for ``sequences`` sequences) with the
    draft's weights and KV cache and the N draft positions per sequence (module docstring)."""
    spec = speculation_for(g, task)
    if spec is None:
        return m
    weights, kv = _draft_bytes(g, task, spec, sequences)
    lookahead = m.kv_cache * spec.tokens // g.seq_len(task)
    return replace(m, weights=m.weights + weights, kv_cache=m.kv_cache + kv + lookahead)


def step_flops(f0: int, f1: int, d0: int, d1: int, n: int) -> tuple[int, int]:
    """(F0, F1) with F0 + F1 c the FLOPs of one speculative engine step for a sequence at
    context c: the model's decode at c, ..., c + n (each f0 + f1 x context) and n draft steps
    (d0 + d1 c each; module docstring). Exact ints.

    >>> step_flops(10, 1, 3, 2, 1)  # (10 + c) + (10 + c + 1) + (3 + 2 c)
    (24, 4)
    """
    return (n + 1) * f0 + f1 * n * (n + 1) // 2 + n * d0, (n + 1) * f1 + n * d1


def speculative_cost(g: GroupTasks, task: Task, cost: DecodeCost, prompt: int) -> DecodeCost:
    """``cost`` (one token per step) as an engine step of N drafts and a verification of N + 1
    positions (module docstring), or ``cost`` itself without speculation."""
    spec = speculation_for(g, task)
    if spec is None:
        return cost
    n = spec.tokens
    replicas = g.layouts[task.index].dp
    weights, kv = _draft_bytes(g, task, spec, replicas)
    tokens = -(-g.seq_len(task) // g.layouts[task.index].cp)
    d0, d1 = decode_flops(spec.draft)
    f0, f1 = step_flops(cost.f0, cost.f1, d0 + spec.projection_flops_per_token, d1, n)
    draft_prefill = int(work_prefill(spec.draft, prompt, 1, g.s.counting))
    return replace(
        cost,
        f0=f0,
        f1=f1,
        prefill_flops=cost.prefill_flops + draft_prefill + prompt * spec.projection_flops_per_token,
        weight_bytes=cost.weight_bytes + n * weights,
        kv_bytes_per_token=cost.kv_bytes_per_token + n * kv / tokens,
        tokens_per_step=spec.tokens_per_step,
    )


def speculation_notes(dep: Deployment) -> list[str]:
    """One line per distinct speculative engine of ``dep``: the draft, N, P and the tokens an
    engine step emits (the output's statement of the modelling choice)."""
    if dep.ideal:
        return []
    if not dep.engine.speculative_tokens and all(
        g.engine is None or not g.engine.speculative_tokens for g in dep.groups
    ):  # a group's engine takes the group's value or the run's (group_engine): none drafts
        return []
    engines = [dep.engine, *(group_engine(dep, g.members) for g in dep.groups
                             if g.engine is not None)]  # fmt: skip
    out: list[str] = []
    for e in engines:
        if not e.speculative_tokens:
            continue
        p = e.speculative_acceptance
        if p is None:
            p = MTP_ACCEPTANCE
            given = "MTP_ACCEPTANCE, DeepSeek-V3 report §5.4.3"
        else:
            given = "given"
        draft = "the model's MTP layer" if e.speculative_draft == MTP else \
            f"draft model {e.speculative_draft}"  # fmt: skip
        g = expected_tokens_per_step(e.speculative_tokens, p)
        line = (f"speculative decoding: {e.speculative_tokens} draft token(s) per step from "
                f"{draft}, acceptance {p:g} ({given}), independent: {g:.3g} tokens per "
                f"sequence per engine step in expectation; each step verifies "
                f"{e.speculative_tokens + 1} positions per sequence")  # fmt: skip
        if line not in out:
            out.append(line)
    return out
