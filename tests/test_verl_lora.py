"""verl's LoRA keys, each backend its own (rlmcost.frameworks.verl_lora): the Megatron workers'
``actor_rollout_ref.model.lora.*`` (verl/workers/config/megatron_peft.py @b178a3cd, from PR
4063, v0.7.0) and the FSDP workers' ``model.lora_rank``/``target_modules``."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlmcost.errors import SpecError
from rlmcost.frameworks.launch_scripts import import_verl_script

SCRIPT = Path(__file__).parent / "data" / "scripts" / "verl_qwen2-7b_math_megatron_lora.sh"
L = "actor_rollout_ref.model.lora"


def _flags(extra: list[str], version: str | None = None) -> dict:
    return dict(import_verl_script(SCRIPT, extra, [], version, "h100").flags)


def test_megatron_lora_example_prices_its_adapter() -> None:
    """verl examples/grpo_trainer/run_qwen2-7b_math_megatron_lora.sh @b178a3cd5 sets
    lora.rank=256 lora.alpha=512 lora.lora_A_init_method=kaiming under
    ppo_megatron_trainer; megatron_peft.py's LoRA defaults to target_modules linear_qkv,
    linear_proj, linear_fc1, linear_fc2: every projection. The importer had warned "did you
    mean lora_rank" and priced full fine-tuning."""
    q = import_verl_script(SCRIPT, [], [], None, "h100")
    flags = dict(q.flags)
    assert (flags["--lora-rank"], flags["--lora-targets"]) == (256, "all-linear")
    assert not [k for k in q.ignored if "lora" in k], q.ignored
    # the script's commented alternative: canonical_lora over its split names, all seven
    canonical = [f"{L}.type=canonical_lora", f'{L}.target_modules=["linear_q","linear_k",'
                 '"linear_v","linear_proj","linear_fc1_up","linear_fc1_gate","linear_fc2"]']
    assert _flags(canonical)["--lora-targets"] == "all-linear"
    assert _flags([f"{L}.type=canonical_lora", f"{L}.target_modules=[linear_q,linear_v]"])[
        "--lora-targets"] == "q,v"  # fmt: skip
    assert _flags([f"{L}.target_modules=[linear_qkv,linear_fc2]"])["--lora-targets"] == \
        "q,k,v,down"  # fmt: skip
    # exclude_modules alone: Megatron-Bridge's matcher asserts it is empty beside verl's
    # default target_modules; with target_modules=[] every projection but the excluded
    with pytest.raises(SpecError, match="exclude_modules is empty then"):
        _flags([f"{L}.exclude_modules=[linear_proj]"])
    assert _flags([f"{L}.exclude_modules=[linear_proj]", f"{L}.target_modules=[]"])[
        "--lora-targets"] == "q,k,v,gate,up,down"  # fmt: skip
    with pytest.raises(SpecError, match="match none of the decoder layer's projections"):
        _flags([f"{L}.target_modules=[q_proj]"])  # a Hugging Face name: no Megatron module
    assert "--lora-rank" not in _flags([f"{L}.rank=0"])


def test_each_backend_reads_only_its_own_lora_keys() -> None:
    """Megatron workers never read model.lora_rank; FSDP workers never read model.lora.*;
    a verl before PR 4063 (2025-11-25; v0.6.x) has no Megatron LoRA."""
    q = import_verl_script(SCRIPT, [f"{L}.rank=0", "actor_rollout_ref.model.lora_rank=64"], [],
                           None, "h100")  # fmt: skip
    assert "--lora-rank" not in dict(q.flags)
    assert any("Megatron workers do not read it" in n for n in q.notes)
    old = import_verl_script(SCRIPT, [], [], "0.6.1", "h100")
    assert "--lora-rank" not in dict(old.flags)
    assert any("from PR 4063" in n for n in old.notes)
    assert dict(import_verl_script(SCRIPT, [], [], "0.7.0", "h100").flags)["--lora-rank"] == 256
    fsdp = import_verl_script(SCRIPT, ["actor_rollout_ref.actor.strategy=fsdp",
                                       "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2"],
                              [], None, "h100")  # fmt: skip
    assert "--lora-rank" not in dict(fsdp.flags)
    assert any("FSDP workers read actor_rollout_ref.model.lora_rank" in n for n in fsdp.notes)
    assert not [k for k in fsdp.ignored if "lora" in k]
