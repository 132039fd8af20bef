"""NeMo RL's Megatron generation (``--engine megatron``): what the output names, the layout a
dedicated engine inherits, the pool when it runs out, the host time per decode step and a
hybrid model's recurrent states in the pool.

Independent sources (quoted, not rlmcost's code): NVIDIA-NeMo/RL at 7ea279abf,
nemo_rl/models/generation/megatron/config.py ``merged_inference_megatron_cfg`` (``{**megatron_cfg,
**mcore_generation_config}``) and megatron_worker.py ``_initialize_inference_engine``
(``mamba_memory_ratio=(0.1 + 0.1 * num_speculative_tokens if is_hybrid_model else None)``, no
``paused_buffer_size_gb``, no ``async_sched_mode``); NVIDIA/Megatron-LM at d98e8a64d,
megatron/core/inference/contexts/dynamic_context.py (the hybrid split, the KV block's bytes
over the attention layers, ``evict_overflow_paused_requests``) and megatron/core/ssm/
gated_delta_net/gdn.py ``mamba_state_shapes_per_request`` (``(conv_dim / TP, conv_kernel)``,
``(H_v / TP, d_k, d_v)``); Megatron-LM PR 6467 (372.4 us of post-sampling host work per decode
step at batch 256); Qwen3-Next-80B-A3B's config.json (48 layers, every fourth full attention:
36 Gated DeltaNet; 16 key and 32 value heads of 128; conv kernel 4; 2 KV heads of 256).
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rlmcost.algorithms.kinds import Kind
from rlmcost.choices import Dtype
from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv
from rlmcost.deployment.engine_kv import state_dtype
from rlmcost.deployment.kinds import EngineKind
from rlmcost.deployment.megatron_engine import MEGATRON_NOTE
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.perf.engine_host import STEP_OVERHEAD_S, host_options


def _generate(argv: list[str]):  # noqa: ANN202
    e = evaluate_deployment(run_from_argv("grpo", argv))
    (job,) = [j for g in e.groups for j in g.jobs if j.task.kind is Kind.GENERATE]
    return e, job


def test_the_default_deployment_line_names_megatron_not_vllm() -> None:
    """Under --engine megatron NeMo RL runs its Megatron policy and Megatron-core's engine
    (grpo_math_1B_megatron.yaml); the line named the DTensor policy and vLLM."""
    query = ["grpo", "-m", "qwen3-30b-a3b", "-H", "h100", "--gpus", "16", "--engine",
             "megatron", "--json"]  # fmt: skip
    res = CliRunner().invoke(app, query)
    assert res.exit_code == 0, res.output
    (line,) = [n for n in json.loads(res.stdout)["notes"] if n.startswith("deployment: ")]
    summary = line[line.index("(the default deployment:"):line.index("; as flags:")]
    assert "Megatron-core policy" in summary and "dynamic engine" in summary
    assert "vLLM" not in summary and "DTensor (FSDP2)" not in summary
    # the larger-model example's defaults the engine keeps, its vLLM TP 4 not among them
    assert "--micro-batch 1" in summary and "--rollout-tp" not in summary
    text = " ".join(CliRunner().invoke(app, query[:-1]).output.split())
    assert "vLLM" not in text[text.index("deployment: nemo-rl"):text.index("as flags:")]


def test_a_dedicated_layout_given_its_tp_keeps_the_trainers_ep() -> None:
    """merged_inference_megatron_cfg: mcore_generation_config's TP over megatron_cfg, whose
    expert_model_parallel_size stays: --rollout-tp 4 under --ep 8 decodes at EP 8 (was 1)."""
    base = ["-m", "qwen3-30b-a3b", "-H", "h100", "--gpus", "32", "--engine", "megatron",
            "--ep", "8", "--rollout-tp", "4"]  # fmt: skip
    _, job = _generate(base)
    assert (job.layout.tp, job.layout.ep) == (4, 8)
    _, given = _generate([*base, "--rollout-ep", "4"])
    assert (given.layout.tp, given.layout.ep) == (4, 4)
    assert "left at 1 are the trainer's" in MEGATRON_NOTE


def test_a_full_pool_is_priced_as_evictions_recomputed() -> None:
    """paused_buffer_size_gb unset: the paused requests that cannot resume are evicted, their
    prompt + generated tokens re-prefilled (dynamic_engine.py checkpoints them to the head of
    the waiting queue): the timeline's preemptions, and the note says so."""
    e, job = _generate(["-m", "llama-3.1-8b", "-H", "h100", "--gpus", "8", "--engine",
                        "megatron", "-T", "4096", "--kv-buffer-gib", "1"])  # fmt: skip
    assert job.timeline is not None and job.timeline.preemptions > 0
    note = next(n for n in e.notes if n.startswith("--engine megatron"))
    assert "evicts the newest paused ones" in note and "recompute preemption" in note


def test_the_megatron_step_carries_its_measured_host_time() -> None:
    """LEGACY async scheduling: the post-sampling chain (372.4 us at batch 256, PR 6467) is on
    the step's path, in and out of a stream; the fixed step overhead as for other engines."""
    for in_process in (True, False):
        assert host_options(2.75, in_process, "megatron") == (
            STEP_OVERHEAD_S * 2.75, 372.4e-6 / 256, 0.0)
    assert "1.45 us per sequence" in MEGATRON_NOTE


def test_a_hybrid_models_states_take_a_tenth_of_the_pool() -> None:
    """Qwen3-Next at TP 2 (EP 8) in a 10 GiB pool: a request's states are 36 layers x
    (conv 4,096 x 4 + SSM 16 x 128 x 128) x 2 B = 20,054,016 B; 10 % of the pool holds 53 of
    them, rounded to TP 2 and to 4: 52 requests (the KV blocks of the other 90 %, 12 KiB a
    token over 12 attention layers, are 3,071 usable, not the cap)."""
    state = 36 * (2 * 16 * 128 + 32 * 128) // 2 * 4 + 36 * 16 * 128 * 128
    assert state * 2 == 20_054_016
    assert int(10 * 2**30 * 0.1 // (state * 2)) == 53
    _, job = _generate(["-m", "qwen3-next-80b-a3b", "-H", "h100", "--gpus", "16", "--tp",
                        "2", "--ep", "8", "--engine", "megatron", "-T", "4096"])  # fmt: skip
    assert job.timeline is not None and job.timeline.slots == 52
    # Megatron-core keeps the states in params_dtype (MambaInferenceStateConfig.from_model)
    assert state_dtype(EngineKind.MEGATRON, Dtype.BF16) is Dtype.BF16
