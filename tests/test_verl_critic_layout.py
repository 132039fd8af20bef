"""verl's critic recomputation and SwiGLU keys (rlmcost.frameworks.verl_recompute
``critic_notes``): read, checked as Megatron-core checks them, and named in a note where they
differ from the actor's, since rlmcost trains the critic at the actor's layout.

Sources: verl's Megatron ``CriticWorker`` builds its model from
``critic.megatron.override_transformer_config`` and its FSDP ``CriticWorker`` reads
``critic.model.enable_gradient_checkpointing`` (verl/workers/megatron_workers.py,
verl/workers/fsdp_workers.py @b178a3cd); ``ResourcePoolManager`` maps actor, critic and
reference to one ``global_pool`` (verl/trainer/main_ppo.py); Megatron-core's
``TransformerConfig.__post_init__`` refuses ``recompute_granularity: full`` without a method
and a layer count (transformer_config.py @core_v0.15.0). The script: verl's
examples/grpo_trainer/run_qwen2-32b_grpo_8_h20_megatron.sh (tests/data/scripts), run as PPO
(``algorithm.adv_estimator=gae``: a critic).
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner
from verl_rows import import_verl_json

from rlmcost.cli import app

runner = CliRunner()
DATA = Path(__file__).parent / "data"
MEGATRON = DATA / "scripts" / "verl_qwen2-32b_grpo_8_h20_megatron.sh"
FSDP = DATA / "frameworks" / "verl_grpo.yaml"
OTC = "critic.megatron.override_transformer_config"
PPO = "algorithm.adv_estimator=gae"


def _import(config: Path, *extra: str) -> dict:
    return import_verl_json(config, *extra)["query"]


def _critic_notes(query: dict) -> list[str]:
    return [n for n in query["notes"] if "trains the critic at the actor's layout" in n]


def test_a_critic_recomputing_where_the_actor_does_not_is_a_note() -> None:
    full = (f"+{OTC}.recompute_granularity=full", f"+{OTC}.recompute_method=uniform",
            f"+{OTC}.recompute_num_layers=1")  # fmt: skip
    q = _import(MEGATRON, PPO, *full)
    assert not any(k.startswith(OTC) for k in q["ignored_keys"])
    (note,) = _critic_notes(q)
    assert "recompute_granularity full (recompute_method uniform, recompute_num_layers 1)" in note
    assert "actor's null" in note
    # the actor's --ckpt stays the actor's (verl's default: no recomputation)
    assert "--ckpt none" in " ".join(q["argv"])
    # the same values on both: nothing to say
    actor = [k.replace(f"+{OTC}", "+actor_rollout_ref.actor.megatron.override_transformer_config")
             for k in full]  # fmt: skip
    assert _critic_notes(_import(MEGATRON, PPO, *full, *actor)) == []


def test_a_critic_config_megatron_core_refuses_is_an_error() -> None:
    res = runner.invoke(app, ["import", "verl", str(MEGATRON), PPO,
                              f"+{OTC}.recompute_granularity=full"])  # fmt: skip
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert f"{OTC}.recompute_granularity=full needs recompute_method" in res.output


def test_the_critics_swiglu_fusion_differing_is_a_note() -> None:
    (note,) = _critic_notes(_import(MEGATRON, PPO, f"+{OTC}.bias_activation_fusion=True"))
    assert "bias_activation_fusion true against the actor's unset" in note


def test_the_fsdp_critics_checkpointing_and_no_critic() -> None:
    key = "critic.model.enable_gradient_checkpointing"
    (note,) = _critic_notes(_import(FSDP, PPO, f"+{key}=False"))
    assert f"{key}=false against the actor's true" in note
    grpo = _import(FSDP, f"+{key}=False", f"+{OTC}.recompute_granularity=full")
    assert _critic_notes(grpo) == [] and key not in grpo["ignored_keys"]
    assert f"{OTC}.recompute_granularity" not in grpo["ignored_keys"]  # no critic, no cost
