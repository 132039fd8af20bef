"""verl's Megatron backend as `rlmcost import verl` reads it: expert tensor parallelism and
megatron-core's hybrid CPU optimizer, as verl's DeepSeek-V3 671B script sets them
(verl examples/grpo_trainer/run_deepseek671b_math_megatron_96gb.sh: TP 8, PP 12, EP 8, ETP=1,
optimizer_cpu_offload with optimizer_offload_fraction 1.0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlmcost.errors import SpecError
from rlmcost.frameworks.verl import import_verl

VERL = Path(__file__).parent / "data" / "frameworks" / "verl_grpo.yaml"
A = "actor_rollout_ref.actor"
MEGATRON = [
    f"{A}.strategy=megatron",
    f"{A}.megatron.tensor_model_parallel_size=2",
    f"{A}.megatron.expert_model_parallel_size=4",
    f"{A}.megatron.expert_tensor_parallel_size=1",
    f"{A}.megatron.param_offload=true",
    f"{A}.megatron.optimizer_offload=true",
]
CPU_OPT = f"+{A}.optim.override_optimizer_config"


def _flags(overrides: list[str]) -> dict[str, object]:
    return dict(import_verl(VERL, overrides).flags)


def test_etp_below_tp_is_passed() -> None:
    # megatron-core: expert_tensor_parallel_size None means TP; the script's ETP=1 differs
    assert _flags(MEGATRON)["--etp"] == 1


def test_hybrid_cpu_optimizer_at_fraction_one_is_host_adam() -> None:
    # without it, megatron_workers.py moves the optimizer to the host between phases only
    assert _flags(MEGATRON)["--offload"] == "params-idle,optimizer-idle"
    whole = [*MEGATRON, f"{CPU_OPT}.optimizer_cpu_offload=true",
             f"{CPU_OPT}.optimizer_offload_fraction=1.0"]  # fmt: skip
    q = import_verl(VERL, whole)
    assert dict(q.flags)["--offload"] == "params-idle,optimizer"
    assert any("hybrid CPU optimizer" in n for n in q.notes)


def test_partial_offload_fraction_is_refused() -> None:
    part = [*MEGATRON, f"{CPU_OPT}.optimizer_cpu_offload=true",
            f"{CPU_OPT}.optimizer_offload_fraction=0.5"]  # fmt: skip
    with pytest.raises(SpecError, match="optimizer_offload_fraction"):
        import_verl(VERL, part)


def test_megatron_recompute_follows_override_transformer_config() -> None:
    # verl/trainer/config/engine/megatron.yaml at b178a3c: recompute_granularity null, and
    # megatron_workers.py ignores model.enable_gradient_checkpointing (FSDP workers read it)
    q = import_verl(VERL, [*MEGATRON, "actor_rollout_ref.model.enable_gradient_checkpointing=true"])
    assert dict(q.flags)["--ckpt"] == "none"
    assert any("recompute_granularity null" in n for n in q.notes)
    # run_deepseek671b_math_megatron_96gb.sh at b178a3c: full, uniform, 1 layer per chunk
    tf = f"+{A}.megatron.override_transformer_config"
    full = [*MEGATRON, f"{tf}.recompute_granularity=full", f"{tf}.recompute_method=uniform",
            f"{tf}.recompute_num_layers=1"]  # fmt: skip
    q = import_verl(VERL, full)
    assert dict(q.flags)["--ckpt"] == "full"
    assert not [k for k in q.ignored if "recompute" in k]
    with pytest.raises(SpecError, match="recompute_granularity"):
        import_verl(VERL, [*MEGATRON, f"{tf}.recompute_granularity=block"])


def test_fsdp_recompute_follows_enable_gradient_checkpointing() -> None:
    # verl/trainer/config/model/hf_model.yaml: enable_gradient_checkpointing True by default
    assert _flags([])["--ckpt"] == "full"
    off = ["actor_rollout_ref.model.enable_gradient_checkpointing=false"]
    assert _flags(off)["--ckpt"] == "none"


TF = f"+{A}.megatron.override_transformer_config"


def _recompute(*keys: str) -> tuple[str, list[str]]:
    q = import_verl(VERL, [*MEGATRON, *(f"{TF}.{k}" for k in keys)])
    return str(dict(q.flags)["--ckpt"]), [n for n in q.notes if "recompute" in n]


def test_megatron_full_recompute_needs_the_method_and_layers_megatron_core_checks() -> None:
    # megatron/core/transformer/transformer_config.py @core_v0.15.0 __post_init__: under full,
    # recompute_method must be uniform or block and recompute_num_layers given (ValueError)
    with pytest.raises(SpecError, match="recompute_method"):
        _recompute("recompute_granularity=full")
    with pytest.raises(SpecError, match="recompute_method"):
        _recompute("recompute_granularity=full", "recompute_method=uniform")
    with pytest.raises(SpecError, match="recompute_method"):
        _recompute("recompute_granularity=full", "recompute_num_layers=1")
    # uniform x 1 layer: each layer's input kept, one layer rerun: rlmcost's full, no caveat
    assert _recompute("recompute_granularity=full", "recompute_method=uniform",
                      "recompute_num_layers=1") == ("full", [])  # fmt: skip


def test_megatron_chunked_or_block_recompute_is_said_where_rlmcost_counts_otherwise() -> None:
    ckpt, notes = _recompute("recompute_granularity=full", "recompute_method=uniform",
                             "recompute_num_layers=4")  # fmt: skip
    assert ckpt == "full" and len(notes) == 1 and "one input per 4 layers" in notes[0]
    ckpt, notes = _recompute("recompute_granularity=full", "recompute_method=block",
                             "recompute_num_layers=2")  # fmt: skip
    assert ckpt == "full" and len(notes) == 1 and "first 2 layers of each pipeline" in notes[0]


def test_megatron_selective_recompute_reads_its_modules() -> None:
    # verl's engine/megatron.yaml default recompute_modules [core_attn]: the attention core,
    # rlmcost's --ckpt selective (Korthikanti et al. 2022 §4.3)
    assert _recompute("recompute_granularity=selective") == ("selective", [])
    ckpt, notes = _recompute("recompute_granularity=selective",
                             "recompute_modules=[moe_act,layernorm]")  # fmt: skip
    assert ckpt == "selective" and len(notes) == 1 and "moe_act, layernorm rerun" in notes[0]
    with pytest.raises(SpecError, match="not among Megatron-core's modules"):
        _recompute("recompute_granularity=selective", "recompute_modules=[attention]")
    with pytest.raises(SpecError, match="must be null under selective"):
        _recompute("recompute_granularity=selective", "recompute_num_layers=2")
