"""The NeMo RL v0.5-v0.7 performance rows of rl_runs.json against their recipes (issue 18 audit).

Reference: tests/data/frameworks/nemo_rl_perf_recipes_resolved.json, the work-relevant keys of
each row's recipe at its tag (NVIDIA-NeMo/RL v0.5.0, v0.6.0, v0.7.0) with the ``defaults:``
chain merged down to examples/configs/grpo_math_1B.yaml and the ``${...}`` interpolations
resolved. A row either carries the recipe's value or leaves the key out where the importer's
default (rlmcost/frameworks/nemo_rl*.py) is that value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_frameworks import nemo_rl
from rlmcost.specs import get_model

DATA = Path(__file__).parent / "data" / "frameworks"
RECIPES = json.loads((DATA / "nemo_rl_perf_recipes_resolved.json").read_text())
RUNS = {r["id"]: r for r in load_runs()["runs"]
        if r["source"] in ("nemo_rl_v0.5", "nemo_rl_v0.6", "nemo_rl_v0.7")}  # fmt: skip

IMPORTER_DEFAULTS = {
    "loss_fn.force_on_policy_ratio": False,  # nemo_rl.py _on_policy_ratio
    "policy.sequence_packing.fuse_loss": False,  # nemo_rl_batching.py _packed_loss
    "policy.generation.vllm_cfg.enforce_eager": False,  # nemo_rl.py _engine
    "policy.generation.colocated.resources.num_nodes": None,  # read only when apart
    "policy.generation.colocated.resources.gpus_per_node": None,
    "policy.megatron_cfg.fp8_cfg.enabled": False,  # rl_runs_frameworks.nemo_rl
    "policy.megatron_cfg.moe_token_dispatcher_type": "alltoall",  # frameworks/moe_dispatcher.py
    "policy.megatron_cfg.moe_flex_dispatcher_backend": None,
    "cluster.segment_size": None,  # nemo_rl.py _layout: no topology-aware placement
    "policy.megatron_cfg.moe_permute_fusion": True,  # nemo_rl.py (v0.7.0's base, v0.3's NeMo)
}
"""The value a row that leaves the key out is imported with."""


def test_every_v05_to_v07_row_has_its_recipe() -> None:
    # 16 v0.5 + 18 v0.6 + 23 v0.7 GRPO rows of performance-summary.md
    assert sorted(RECIPES["rows"]) == sorted(RUNS)
    assert len(RUNS) == 57
    for rid, (tag, recipe, _) in RECIPES["rows"].items():
        assert recipe in RUNS[rid]["cite"], rid
        assert tag[:4] in rid, rid


@pytest.mark.parametrize("rid", sorted(RUNS))
def test_row_settings_are_the_recipes(rid: str) -> None:
    _, recipe, values = RECIPES["rows"][rid]
    settings = RUNS[rid]["framework_settings"]
    moe = bool(get_model(RUNS[rid]["model"]).n_experts)
    for key, want in zip(RECIPES["keys"], values, strict=True):
        if key == "policy.megatron_cfg.moe_permute_fusion" and not moe:
            continue  # a dense model has no token permutation to fuse
        have = settings[key] if key in settings else IMPORTER_DEFAULTS.get(key, "<missing>")
        if key == "policy.megatron_cfg.fp8_cfg.enabled" and want is None:
            want = False  # no fp8_cfg block at v0.5.0: FP8 training off
        if key == "policy.megatron_cfg.moe_token_dispatcher_type" and want is None:
            want = "alltoall"  # unset at v0.5.0: Megatron-Bridge's qwen3_moe_bridge.py alltoall
        assert have == want, f"{rid}: {key} = {have!r}, {recipe} at its tag sets {want!r}"


V06_DEEPSEEK = [rid for rid in RUNS if rid.startswith("nemo-rl-v0.6-") and "deepseek" in rid]


def test_v06_deepseek_rows_fuse_the_packed_loss() -> None:
    # examples/configs/recipes/llm/performance/grpo-deepseek-v3-32n8g.yaml:19 at v0.6.0
    # (sequence_packing.fuse_loss: true), inherited by every v0.6 DeepSeek-V3 recipe
    assert len(V06_DEEPSEEK) == 7
    for rid in V06_DEEPSEEK:
        q, *_ = nemo_rl(RUNS[rid])
        assert "--fused-loss" in dict(q.flags), rid


def test_v06_deepseek_on_policy_twice_the_gpus_keep_the_recipes_ep32() -> None:
    # grpo-deepseek-v3-64n8g.yaml:10 and -64n4g.yaml:10 at v0.6.0 (expert_model_parallel_size:
    # 32); the page's column says 16, the v0.7 section 32 for the same unchanged files
    for rid in ("nemo-rl-v0.6-h100-deepseek-v3-grpo-512gpu",
                "nemo-rl-v0.6-gb200-deepseek-v3-grpo-256gpu"):  # fmt: skip
        q, *_ = nemo_rl(RUNS[rid])
        assert dict(q.flags)["--ep"] == 32, rid


def _megatron(tmp_path: Path, **keys: object) -> dict[str, object]:
    base = {"policy.model_name": "llama-3.1-8b", "policy.dtensor_cfg.enabled": False,
            "policy.megatron_cfg.enabled": True, "grpo.num_prompts_per_step": 8,
            "grpo.num_generations_per_prompt": 4, "policy.train_global_batch_size": 32,
            "policy.max_total_sequence_length": 1024}  # fmt: skip
    path = tmp_path / "c.yaml"
    path.write_text(json.dumps({**base, **{f"policy.megatron_cfg.{k}": v for k, v in
                                           keys.items()}}))  # fmt: skip
    q = import_nemo_rl(path, [], 256)
    return {"ckpt": dict(q.flags)["--ckpt"], "notes": " ".join(q.notes)}


def test_recompute_granularity_is_read(tmp_path: Path) -> None:
    # nemo_rl/models/megatron/setup.py:793-808 at v0.7.0: granularity default full; selective
    # with recompute_modules null keeps Megatron-core's ["core_attn"] (rlmcost's selective)
    assert _megatron(tmp_path, activation_checkpointing=True)["ckpt"] == "full"
    assert _megatron(tmp_path, activation_checkpointing=False,
                     recompute_granularity="selective")["ckpt"] == "none"  # fmt: skip
    got = _megatron(tmp_path, activation_checkpointing=True, recompute_granularity="selective")
    assert got["ckpt"] == "selective" and "recompute_modules" not in got["notes"]
    moe = _megatron(tmp_path, activation_checkpointing=True, recompute_granularity="selective",
                    recompute_modules=["moe"])  # fmt: skip
    assert moe["ckpt"] == "selective" and "recompute_modules moe" in moe["notes"]


def test_bad_recompute_granularity_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="recompute_granularity"):
        _megatron(tmp_path, activation_checkpointing=True, recompute_granularity="block")


def test_v07_gb200_flex_dispatcher_rows_run_hybridep_as_deepep() -> None:
    # grpo-deepseek-v3-32n4g.yaml:10-12 and grpo-qwen3-235b-16n4g.yaml:10-12 at v0.7.0
    # (moe_token_dispatcher_type flex, moe_flex_dispatcher_backend hybridep, 32 SMs)
    flex = [rid for rid in RUNS if RUNS[rid]["framework_settings"].get(
        "policy.megatron_cfg.moe_token_dispatcher_type") == "flex"]  # fmt: skip
    assert sorted(flex) == sorted(
        f"nemo-rl-v0.7-gb200-{m}-grpo-{n}gpu"
        for m, n in (("deepseek-v3", 128), ("deepseek-v3", 256),
                     ("qwen3-235b-a22b", 64), ("qwen3-235b-a22b", 128))
    )  # fmt: skip
    for rid in flex:
        q, *_ = nemo_rl(RUNS[rid])
        # HybridEP timed as DeepEP's normal kernels (rlmcost.frameworks.moe_dispatcher)
        assert dict(q.flags)["--ep-dispatcher"] == "deepep", rid
        assert any("flex with HybridEP" in n and "SM share not modelled" in n
                   for n in q.notes), rid  # fmt: skip
        assert not any("dispatcher" in k or "hybridep" in k for k in q.ignored), rid
    # every other row: no flag, rlmcost's alltoall (the recipes' base config's, v0.6.0 on;
    # the Megatron-Bridge provider's at v0.5.0)
    for rid in set(RUNS) - set(flex):
        q, *_ = nemo_rl(RUNS[rid])
        assert "--ep-dispatcher" not in dict(q.flags), rid


def test_v07_gb200_moe_rows_state_the_recipes_segment_size() -> None:
    # cluster.segment_size at v0.7.0: 16 in the GB200 DeepSeek-V3 and Qwen3-235B recipes
    # (e.g. grpo-deepseek-v3-32n4g.yaml:22), 4 and 2 in grpo-qwen3-30ba3b-4n4g.yaml:56 and
    # -4n4g-async-1off.yaml:36; docs/cluster.md 'Topology-Aware Placement for MoE'
    segments = {rid: RUNS[rid]["framework_settings"].get("cluster.segment_size") for rid in RUNS}
    assert sorted(v for v in segments.values() if v) == [2, 4] + [16] * 6
    for rid, seg in segments.items():
        if seg:
            assert RUNS[rid]["hardware"] == "gb200" and rid.startswith("nemo-rl-v0.7-"), rid
            q, *_ = nemo_rl(RUNS[rid])
            assert any(n.startswith(f"cluster.segment_size {seg}:") for n in q.notes), rid
