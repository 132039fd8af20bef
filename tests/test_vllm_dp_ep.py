"""vLLM's data parallelism with expert parallelism as rlmcost's data-parallel attention.

Sources: vLLM docs/serving/data_parallel_deployment.md (each DP rank a core engine of TP GPUs
with its own requests and KV cache; the expert layers over DP x TP, ranks in lockstep); NeMo RL
nemo_rl/models/generation/vllm/vllm_generation.py @7ea279abf (``vllm_cfg.expert_parallel_size``:
"vLLM's EP = DP * TP", ``vllm_dp_size = ep_size // tp_size``, EP a multiple of TP); verl
verl/workers/config/rollout.py @b178a3cd (``expert_parallel_size`` = TP x
``data_parallel_size``, one vLLM engine of DP x TP ranks in vllm_async_server.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.verl import import_verl

DATA = Path(__file__).parent / "data" / "frameworks"
VLLM = "policy.generation.vllm_cfg"


def _flags(q) -> dict:  # type: ignore[no-untyped-def]
    return dict(q.flags)


def test_nemo_rl_ep_above_tp_is_dp_attention_over_the_ep_group() -> None:
    q = import_nemo_rl(DATA / "nemo_rl_grpo_math.yaml", [
        f"{VLLM}.tensor_parallel_size=4", f"{VLLM}.expert_parallel_size=16",
        "cluster.gpus_per_node=8", "cluster.num_nodes=2", "policy.model_name=Qwen/Qwen3-30B-A3B"])
    f = _flags(q)
    assert f["--rollout-tp"] == 16 and f["--dp-attention"] == 4
    # EP equal to TP: the experts over the TP ranks, the same bytes a GPU: TP, said in a note
    q = import_nemo_rl(DATA / "nemo_rl_grpo_math.yaml", [
        f"{VLLM}.tensor_parallel_size=4", f"{VLLM}.expert_parallel_size=4",
        "cluster.gpus_per_node=8", "policy.model_name=Qwen/Qwen3-30B-A3B"])
    assert _flags(q)["--rollout-tp"] == 4 and "--dp-attention" not in _flags(q)
    assert any("expert_parallel_size 4 = tensor_parallel_size" in n for n in q.notes)
    with pytest.raises(SpecError, match="not a multiple of tensor_parallel_size 4"):
        import_nemo_rl(DATA / "nemo_rl_grpo_math.yaml", [
            f"{VLLM}.tensor_parallel_size=4", f"{VLLM}.expert_parallel_size=6"])


def test_verl_dp_times_tp_engine_is_dp_attention() -> None:
    q = import_verl(str(DATA / "verl_grpo.yaml"), [
        "actor_rollout_ref.rollout.tensor_model_parallel_size=2",
        "actor_rollout_ref.rollout.data_parallel_size=4",
        "actor_rollout_ref.rollout.expert_parallel_size=8"])
    f = _flags(q)
    assert f["--rollout-tp"] == 8 and f["--dp-attention"] == 4


def _engine_weights(argv: list[str]) -> int:
    out = CliRunner().invoke(app, ["grpo", "-m", "qwen3-30b-a3b", "--gpus", "16", "--json",
                                   *argv])  # fmt: skip
    assert out.exit_code == 0, out.output
    stage = json.loads(out.stdout)["stages"]["generation"]
    return int(stage["memory_breakdown_bytes"]["weights"])


def test_a_vllm_ep_group_holds_its_share_of_the_experts() -> None:
    # Qwen3-30B-A3B (bf16): an engine of TP 4 holds a quarter of every expert; the same four
    # ranks' attention with the experts over 16 GPUs (EP = 4 x 4) hold a sixteenth of them:
    # fewer weights a GPU, and the same as SGLang's DP attention of that shape
    tp4 = _engine_weights(["--engine", "vllm", "--rollout-tp", "4"])
    ep16 = _engine_weights(["--engine", "vllm", "--rollout-tp", "16", "--dp-attention", "4"])
    sglang = _engine_weights(["--engine", "sglang", "--rollout-tp", "16", "--dp-attention", "4"])
    assert ep16 < tp4 and ep16 == sglang


def test_a_dense_model_under_vllm_dp_is_refused_in_one_line() -> None:
    # vLLM's DP ranks of a dense model share nothing (independent replicas): no DP attention
    out = CliRunner().invoke(app, ["grpo", "-m", "qwen3-8b", "--gpus", "8", "--engine", "vllm",
                                   "--rollout-tp", "4", "--dp-attention", "2"])  # fmt: skip
    assert out.exit_code != 0 and "Traceback" not in out.output
    assert "a dense model" in out.output and "--rollout-tp 2" in out.output
