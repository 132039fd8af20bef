"""A Megatron-core engine's KV pool for a model with recurrent token mixers (Gated DeltaNet or
Mamba layers): the share NeMo RL gives their states and the KV blocks of the rest.

Sources: NVIDIA/Megatron-LM at d98e8a64d, megatron/core/inference/contexts/dynamic_context.py
``DynamicInferenceContext.__init__`` (a hybrid model's recurrent layers, Mamba or GDN, share
one slot-indexed state cache: ``mamba_states_memory_per_request`` = the recurrent layers x
(conv state ``conv_dim / TP x conv_kernel`` + SSM state ``H_v / TP x d_k x d_v``, the shapes
of megatron/core/ssm/gated_delta_net/gdn.py ``mamba_state_shapes_per_request``), both in
``params_dtype`` unless given (megatron/core/inference/config.py
``MambaInferenceStateConfig.from_model``), plus ``(N + 1)`` intermediate copies under N
speculative tokens; the KV block's bytes count the attention layers of the whole layer list,
``params_dtype`` x 2 x layers x ``block_size_tokens`` x heads / TP x head dim);
NVIDIA-NeMo/RL at 7ea279abf, nemo_rl/models/generation/megatron/megatron_worker.py
(``mamba_memory_ratio = 0.1 + 0.1 * num_speculative_tokens`` for a hybrid model,
:func:`~rlmcost.deployment.megatron_engine.hybrid_pool` the split). rlmcost's hybrid
built-ins are Gated DeltaNet models (Qwen3-Next); a Mamba model (Nemotron-H) would take the
same split with its own state shapes, not in the registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.deployment.kinds import EngineKind
from rlmcost.deployment.megatron_engine import hybrid_pool, kv_buffer_bytes
from rlmcost.parallel.shard import tp_shard

if TYPE_CHECKING:
    from rlmcost.parallel.breakdown import MemoryBreakdown
    from rlmcost.placement.device_groups import Task
    from rlmcost.placement.group_memory import GroupMemory


def state_per_request(g: GroupMemory, task: Task) -> int:
    """One request's recurrent states per GPU in a Megatron engine's pool (module docstring):
    0 for a model without recurrent layers."""
    arch = g.s.arch(task.role)
    n = int(arch.n_linear_layers)
    if not n:
        return 0
    sh = tp_shard(arch, g.layouts[task.index].tp)
    dt = g.s.workload.weight_dtype.bytes  # params_dtype (the engine decodes the policy's)
    conv = int(sh.linear_conv_width) * int(arch.linear_conv_kernel)
    ssm = int(sh.linear_value_heads * sh.linear_key_head_dim * sh.linear_value_head_dim)
    spec = g.engine.speculative_tokens
    return n * (conv + ssm) * dt * (1 + (spec + 1 if spec else 0))


def kv_terms(g: GroupMemory, task: Task, one: MemoryBreakdown, pool: int) -> tuple[int, int]:
    """``(pool bytes, KV bytes of one sequence)`` the engine pages into blocks: ``pool`` and
    ``one.kv_cache`` as given, except a Megatron engine serving a model with recurrent layers,
    whose pool loses the states' share (:func:`~rlmcost.deployment.megatron_engine.
    hybrid_pool`) and whose sequence's KV counts its attention layers only."""
    state = state_per_request(g, task) if g.engine.kind is EngineKind.MEGATRON else 0
    if not state:
        return pool, one.kv_cache
    arch, layout = g.s.arch(task.role), g.layouts[task.index]
    attention = int(arch.n_layers) - int(arch.n_linear_layers)
    width = int(tp_shard(arch, layout.tp).kv_cache_width)
    per_token = attention * width * g.s.workload.kv_dtype.bytes
    kv_pool, _ = hybrid_pool(pool, state, g.engine.speculative_tokens)
    return kv_pool, per_token * -(-g.seq_len(task) // layout.cp)


def state_cap(g: GroupMemory, task: Task) -> int | None:
    """The requests whose recurrent states a Megatron engine's pool holds (None: no cap, a
    model without recurrent layers or another engine)."""
    state = state_per_request(g, task) if g.engine.kind is EngineKind.MEGATRON else 0
    if not state:
        return None
    return hybrid_pool(kv_buffer_bytes(g.engine.kv_buffer_gib), state,
                       g.engine.speculative_tokens)[1]  # fmt: skip
