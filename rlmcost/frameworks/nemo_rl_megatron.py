"""NeMo RL import: the Megatron generation backend (``policy.generation.backend: megatron``,
``policy.generation.mcore_generation_config``) as ``--engine megatron``
(:mod:`rlmcost.deployment.megatron_engine` has what is priced).

Sources (NVIDIA-NeMo/RL at 7ea279abf): nemo_rl/models/generation/megatron/config.py
(``merged_inference_megatron_cfg``: the policy's ``megatron_cfg`` with
``mcore_generation_config`` over it; ``dedicated_inference_megatron_cfg``: colocated, a
second model only where the layout or ``transformer_impl`` differs, CP pinned to 1),
megatron_generation.py (``effective_megatron_cfg``: colocated, the training values;
non-colocated, the merged ones), megatron_worker.py ``_initialize_inference_engine`` (the
keys read here), examples/configs/grpo_math_1B.yaml (their defaults).
"""

from __future__ import annotations

from rlmcost.deployment.megatron_engine import (
    MEGATRON_BLOCK_SIZE_TOKENS,
    MEGATRON_KV_BUFFER_GIB,
    MEGATRON_MAX_TOKENS,
)
from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery

M = "policy.generation.mcore_generation_config"
_TRAIN = "policy.megatron_cfg"
_LAYOUT = (("tensor_model_parallel_size", "tp"), ("pipeline_model_parallel_size", "pp"),
           ("expert_model_parallel_size", "ep"))  # fmt: skip
"""The layout keys a dedicated inference model may set, with rlmcost's names."""

_UNMODELLED = ("num_cuda_graphs", "use_cuda_graphs_for_non_decode_steps",
               "inference_cuda_graph_scope", "materialize_only_last_token_logits",
               "enable_chunked_prefill", "refit_backend", "expose_http_server", "parsers",
               "max_model_len", "mamba_inference_ssm_states_dtype",
               "mamba_inference_conv_states_dtype", "logging_step_interval",
               "moe_router_dtype", "activation_checkpointing", "sequence_parallel")  # fmt: skip
"""Keys read and not priced: CUDA-graph capture details (decode is priced as graph replays),
chunked prefill (always chunked at ``max_tokens``), the sequence cap, the refit copy service,
serving, the inference model's own router dtype, recomputation and SP (an engine keeps none)."""


def megatron_generation(r: Reader, q: ImportedQuery) -> tuple[int, str]:
    """The Megatron engine's flags; returns its TP and its layout as ``--groups`` bracket
    keys (for a non-colocated engine)."""
    if not r.flag(f"{_TRAIN}.enabled", False):
        raise SpecError(f"{r.where}: generation.backend megatron generates on the Megatron "
                        "policy's model (nemo_rl/models/generation/megatron); enable "
                        "policy.megatron_cfg")  # fmt: skip
    q.set("--engine", "megatron")
    colocated = r.flag("policy.generation.colocated.enabled", True)
    train = {k: r.integer(f"{_TRAIN}.{k}", 1) for k, _ in _LAYOUT}
    given = {k: r.integer(f"{M}.{k}", None) for k, _ in _LAYOUT}
    merged = {k: train[k] if given[k] is None else given[k] for k, _ in _LAYOUT}
    impl = r.text(f"{M}.transformer_impl", None)
    cp = r.integer(f"{_TRAIN}.context_parallel_size", 1)
    dedicated = merged != train or cp > 1 or (
        impl is not None and impl != r.text(f"{_TRAIN}.transformer_impl", None))
    if colocated and dedicated:
        _dedicated(q, merged, train, cp, impl)
    elif colocated:
        q.note("generation.backend megatron, colocated: the engine decodes from the policy's "
               "own weights in its training layout (config.py dedicated_inference_megatron_cfg "
               "None): no second copy, no refit")  # fmt: skip
    else:
        q.note("generation.backend megatron, not colocated: a policy of its own on the "
               "generation GPUs in the merged layout (megatron_generation.py "
               "effective_megatron_cfg), refitted by Megatron-core's reshard copy service "
               "(refit_backend); priced as nemo-rl's refit of engines apart")  # fmt: skip
    _settings(r, q)
    tp = merged["tensor_model_parallel_size"]
    layout = ";".join(f"{name}={merged[k]}" for k, name in _LAYOUT
                      if name == "tp" or merged[k] > 1)  # fmt: skip
    return tp, layout


def _dedicated(q: ImportedQuery, merged: dict[str, int], train: dict[str, int], cp: int,
               impl: str | None) -> None:  # fmt: skip
    """A colocated engine in a layout of its own: rlmcost's engine layout, resharded into at
    each wake (megatron_worker.py ``_reshard_into_inference_model``)."""
    if merged == train and cp == 1:  # transformer_impl alone
        q.note(f"mcore_generation_config.transformer_impl {impl}: NeMo RL builds a second "
               "model in the same layout and reshards into it at each wake; rlmcost prices "
               "the engine on the policy's own weights (no second copy; not modelled)")
        return
    flags = (("--rollout-tp", "tensor_model_parallel_size"),
             ("--rollout-pp", "pipeline_model_parallel_size"),
             ("--rollout-ep", "expert_model_parallel_size"))  # fmt: skip
    for flag, key in flags:
        if flag != "--rollout-tp" and merged[key] == 1 < train[key]:
            q.note(f"{M}.{key}=1 under training's {train[key]}: rlmcost's {flag} left at 1 "
                   "takes the trainer's degree (deployment.megatron_engine.megatron_degrees); "
                   f"priced at {train[key]}")  # fmt: skip
        if flag == "--rollout-tp" or merged[key] > 1:
            q.convert(f"{M}.{key}={merged[key]}", flag, merged[key],
                      "a dedicated inference layout (training's "
                      f"{train[key]}{', CP ' + str(cp) if cp > 1 else ''}): NeMo RL builds a "
                      "second model and reshards the policy into it at each wake, offloading "
                      "it to host memory while training (megatron_worker.py)")  # fmt: skip


def _settings(r: Reader, q: ImportedQuery) -> None:
    """``mcore_generation_config``: the KV pool, its blocks, the step's tokens, CUDA graphs,
    prefix caching, the pool across a suspend, speculative decoding."""
    gib = r.number(f"{M}.buffer_size_gb", MEGATRON_KV_BUFFER_GIB)
    if gib <= 0:
        raise SpecError(f"{r.where}: {M}.buffer_size_gb {gib:g} must be positive (GiB)")
    q.convert(f"{M}.buffer_size_gb={gib:g}", "--kv-buffer-gib", gib,
              "the engine's KV pool per GPU in GiB (DynamicInferenceContext)")  # fmt: skip
    block = r.integer(f"{M}.block_size_tokens", MEGATRON_BLOCK_SIZE_TOKENS)
    if block != MEGATRON_BLOCK_SIZE_TOKENS:
        q.note(f"{M}.block_size_tokens {block}: rlmcost's --engine megatron pages the KV pool "
               f"in blocks of {MEGATRON_BLOCK_SIZE_TOKENS} (a Run file's engine.block_size "
               "sets another)")  # fmt: skip
    tokens = r.integer(f"{M}.max_tokens", MEGATRON_MAX_TOKENS)
    if tokens != MEGATRON_MAX_TOKENS:
        q.convert(f"{M}.max_tokens={tokens}", "--max-num-batched-tokens", tokens,
                  "tokens per engine step (prefill chunks)")  # fmt: skip
    if r.text(f"{M}.cuda_graph_impl", "local") == "none":
        q.set("--enforce-eager")
    if r.flag(f"{M}.enable_prefix_caching", False):
        q.set("--prefix-caching")
    mode = r.text(f"{M}.kv_cache_management_mode", "persist", ("persist", "offload"))
    q.set("--no-sleep" if mode == "persist" else "--sleep")
    q.note(f"{M}.kv_cache_management_mode {mode}: " + (
        "--no-sleep, the KV pool kept on the GPU while the policy trains" if mode == "persist"
        else "--sleep, the KV pool to host memory and back around each training step"))
    if (n := r.integer(f"{M}.num_speculative_tokens", 0, lo=0)) > 0:
        q.set("--speculative-tokens", n)
        q.note(f"{M}.num_speculative_tokens {n}: drafts from the checkpoint's MTP layers, "
               "acceptance 0.85 (MTP_ACCEPTANCE, DeepSeek-V3 report §5.4.3)")  # fmt: skip
    for key in _UNMODELLED:
        r.raw(f"{M}.{key}")
