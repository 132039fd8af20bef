"""The RL frameworks' trainers run torch's non-reentrant checkpoint as their sources do
(rlmcost.perf.ckpt_early_stop, ``Behaviour.hf_ckpt_early_stop``).

Sources: verl's FSDP workers call ``gradient_checkpointing_enable(gradient_checkpointing_kwargs=
{"use_reentrant": False})`` (verl/workers/fsdp_workers.py @b178a3cd, since PR 114, 5a94e14d of
2025-01-18); OpenRLHF passes ``{"use_reentrant": args.actor.gradient_checkpointing_reentrant}``,
a ``store_true`` flag, default False (openrlhf/trainer/ray/ppo_actor.py, cli/train_ppo_ray.py
@3c3be623); TRL's GRPOConfig sets use_reentrant False unless given since PR 4811 (40d8759d,
2026-01-14), before which it, like DeepSpeed-Chat, left transformers' reentrant default, and
forces it True for PEFT under ZeRO-3 since PR 4951 (f11b4c3f); Megatron trainers rerun the
whole layer. What the early stop
skips is checked against torch's FLOP counter in tests/test_ckpt_early_stop.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner
from verl_rows import CONFIG, QWEN_DAPO

from rlmcost import memo
from rlmcost.cli import app
from rlmcost.deployment.spec import Deployment, LoraSpec, TrainLayout
from rlmcost.evaluation.batch import evaluate_many
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.openrlhf import import_openrlhf
from rlmcost.frameworks.trl import import_trl
from rlmcost.frameworks.verl import import_verl
from rlmcost.perf.ckpt_early_stop import EARLY_STOP_NOTE, LATE_STOP_NOTE, NO_DENSE_NOTE
from rlmcost.perf.step_pass import StepOptions
from rlmcost.placement.pass_options import step_options
from rlmcost.reports.estimate import run_of
from rlmcost.run.command import to_command
from rlmcost.run.spec import Run

runner = CliRunner()


def _early(framework: str | None, **train: object) -> bool:
    opt = step_options(Deployment(framework=framework, train=TrainLayout(**train)))
    return opt is not None and opt.recompute_early_stop


@pytest.mark.parametrize(("framework", "train", "early"), [
    ("verl", {"zero": "3"}, True),  # FSDP workers: use_reentrant=False
    ("verl", {"tp": 2, "zero": "1"}, False),  # its Megatron backend: Megatron's checkpoint
    ("openrlhf", {"zero": "3"}, True),  # gradient_checkpointing_reentrant default False
    ("trl", {"zero": "2"}, True),  # current TRL: use_reentrant False (PR 4811)
    ("nemo-rl", {"zero": "3"}, False),  # DTensor v2 (the examples'): reentrant whole layers
    ("nemo-rl", {"zero": "3", "ckpt": "full", "module_ckpt": True}, True),  # v1: per module
    ("nemo-rl", {"tp": 2, "zero": "1"}, False),  # its Megatron backend
    ("slime", {"tp": 2}, False),  # Megatron-LM
    (None, {}, False),  # no framework: rlmcost's default
])  # fmt: skip
def test_each_framework_runs_its_trainers_checkpoint(framework: str | None, train: dict,
                                                     early: bool) -> None:  # fmt: skip
    assert _early(framework, **train) is early


def test_the_layouts_field_overrides_the_framework() -> None:
    assert not _early("verl", zero="3", recompute_early_stop=False)
    assert _early(None, ckpt="full", recompute_early_stop=True)


@pytest.mark.parametrize("ckpt", ["none", "selective"])
def test_asking_for_the_early_stop_without_full_recomputation_is_an_error(ckpt: str) -> None:
    """The early stop belongs to full recomputation; asked for without it, it would change
    nothing, so the query says how to mend it rather than price it silently."""
    result = runner.invoke(app, ["grpo", "-m", "llama-3.1-8b", "--gpus", "8", "--ckpt", ckpt,
                                 "--recompute-early-stop"])
    assert result.exit_code != 0, result.output
    assert "add --ckpt full" in result.output and "Traceback" not in result.output
    assert _early("verl", zero="3", ckpt=ckpt, recompute_early_stop=False) is False


def test_trls_preset_trains_adapters_under_zero3_reentrantly() -> None:
    """TRL's GRPOTrainer forces use_reentrant=True for PEFT under ZeRO-3 (PR 4951, f11b4c3f,
    0.28.0; the importer's rule): the preset with --lora-rank and --zero 3 prices the whole
    rerun and says why; without adapters, or under ZeRO-2, the early stop stays."""
    lora = LoraSpec(rank=16)
    dep = Deployment(framework="trl", lora=lora, train=TrainLayout(zero="3", ckpt="full"))
    opt = step_options(dep)
    assert opt is not None and not opt.recompute_early_stop
    assert _early("trl", zero="3", ckpt="full")
    dep2 = Deployment(framework="trl", lora=lora, train=TrainLayout(zero="2", ckpt="full"))
    assert (step_options(dep2) or StepOptions()).recompute_early_stop
    args = ["grpo", "-m", "llama-3.1-8b", "--gpus", "8", "--framework", "trl", "--zero", "3",
            "--ckpt", "full", "--lora-rank", "16", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    assert EARLY_STOP_NOTE not in notes
    assert any("forces a reentrant checkpoint" in n for n in notes)


def _update_s(extra: list[str]) -> tuple[float, list[str]]:
    result = runner.invoke(app, ["rlvr", *QWEN_DAPO, "--json", *extra])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    phases = {p["name"]: p["time_s"] for p in out["phases"]}
    return phases["update actor"], out["notes"]


def test_verls_update_skips_the_down_projection_and_says_so() -> None:
    """The verl row's update (--ckpt full, FSDP): faster with the early stop than with the
    whole layer rerun, by less than a ninth of the forward's share (the down projection is a
    third of the layer's GEMM FLOPs and the rerun a quarter of the step's), and noted."""
    on, notes_on = _update_s([])
    off, notes_off = _update_s(["--no-recompute-early-stop"])
    assert on < off < on * (1 + 1 / 9)
    assert EARLY_STOP_NOTE in notes_on and EARLY_STOP_NOTE not in notes_off


def test_a_post_ffn_norm_model_is_noted_where_its_rerun_ends() -> None:
    """Gemma 2's post-FFN norm saves after the down projection, so torch's early stop reruns
    that GEMM and skips only the residual add (perf.ckpt_early_stop, checked there with the
    FLOP counter); the RL query's note says so, not that the projection is skipped."""
    args = ["grpo", "-m", "gemma-2-2b", "--framework", "verl", "--gpus", "8", "--ckpt", "full",
            "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    assert LATE_STOP_NOTE in notes and EARLY_STOP_NOTE not in notes


def test_a_model_without_dense_layers_is_noted_as_rerun_whole() -> None:
    """Qwen3-30B-A3B has a MoE FFN in every layer, whose last saved tensors are the combine's
    (perf.ckpt_early_stop): the early stop skips nothing priced, so verl's update takes the
    same time either way, and the note says the whole forward is recomputed (it said the down
    projection was skipped)."""
    args = ["grpo", "-m", "qwen3-30b-a3b", "--framework", "verl", "--gpus", "16", "--ckpt",
            "full", "--json"]
    on, off = (runner.invoke(app, [*args, *extra]) for extra in ([], ["--no-recompute-early-stop"]))
    assert on.exit_code == 0 and off.exit_code == 0, on.output + off.output
    one, two = json.loads(on.stdout), json.loads(off.stdout)
    assert one["phases"] == two["phases"]
    assert NO_DENSE_NOTE in one["notes"] and EARLY_STOP_NOTE not in one["notes"]
    assert NO_DENSE_NOTE not in two["notes"]


def test_without_full_recomputation_the_option_changes_nothing() -> None:
    i = QWEN_DAPO.index("--ckpt")
    args = [*QWEN_DAPO[:i], "--ckpt", "none", *QWEN_DAPO[i + 2:]]
    r1 = runner.invoke(app, ["rlvr", *args, "--json"])
    r2 = runner.invoke(app, ["rlvr", *args, "--json", "--no-recompute-early-stop"])
    assert r1.exit_code == 0 and r2.exit_code == 0, r1.output + r2.output
    one, two = json.loads(r1.stdout), json.loads(r2.stdout)
    assert one["phases"] == two["phases"] and EARLY_STOP_NOTE not in one["notes"]


def test_openrlhfs_reentrant_flag_is_read(tmp_path: Path) -> None:
    args = ["--pretrain", "meta-llama/Llama-3.1-8B", "--actor_num_gpus_per_node", "8",
            "--vllm_num_engines", "8", "--remote_rm_url", "http://rm", "--gradient_checkpointing",
            "--zero_stage", "3"]
    assert "--no-recompute-early-stop" not in dict(import_openrlhf(args).flags)
    q = import_openrlhf([*args, "--gradient_checkpointing_use_reentrant"])
    assert "--no-recompute-early-stop" in dict(q.flags)


def test_verl_before_pr_114_checkpoints_reentrantly(tmp_path: Path) -> None:
    f = tmp_path / "run.yaml"
    f.write_text(json.dumps(CONFIG))
    assert "--no-recompute-early-stop" in dict(import_verl(f, [], "0.1").flags)
    assert "--no-recompute-early-stop" not in dict(import_verl(f, [], "0.2").flags)
    assert "--no-recompute-early-stop" not in dict(import_verl(f, [], None).flags)
    off = ["actor_rollout_ref.model.enable_gradient_checkpointing=false"]
    assert "--no-recompute-early-stop" not in dict(import_verl(f, off, "0.1").flags)


def _runs() -> list[Run]:
    data = run_of("grpo", "llama-3.2-1b", hardware="h100-sxm", gpus=8).to_json()
    out = []
    for early in (None, False, True):
        d = json.loads(json.dumps(data))
        d["deployment"].update(framework="verl")
        for layout in ("train", "forward"):  # the forwards on the trainer's layout
            d["deployment"][layout].update(zero="3", ckpt="full", recompute_early_stop=early)
        out.append(Run.from_data(d))
    return out


def test_the_fast_path_keys_on_the_option_and_commands_keep_it() -> None:
    """Deployments that differ only in recompute_early_stop keep no estimate for each other
    (placement.group_key: the trainer layout is in the key) and equal their plain
    evaluation; verl's default is on, so False differs from None. The command
    of each Run states the field it gives."""
    runs = _runs()
    fast = [json.dumps(e.to_json(), sort_keys=True, default=repr) for e in evaluate_many(runs)]
    with memo.plain():
        plain = [json.dumps(evaluate_deployment(r).to_json(), sort_keys=True, default=repr)
                 for r in runs]  # fmt: skip
    assert fast == plain
    assert fast[0] != fast[1]
    words = [to_command(r) for r in runs]
    assert "recompute-early-stop" not in words[0]
    assert "--no-recompute-early-stop" in words[1] and " --recompute-early-stop" in words[2]


def test_trls_given_kwargs_and_peft_under_zero3(tmp_path: Path) -> None:
    """open-r1's recipes give ``gradient_checkpointing_kwargs: {use_reentrant: false}``
    (rl_runs.json's TRL rows): early stop even on TRL of 2025-02; PEFT under ZeRO-3 forces
    the reentrant checkpoint from TRL 0.28.0 (grpo_trainer.py @f2cd5771)."""
    cfg = tmp_path / "grpo.yaml"
    cfg.write_text(json.dumps({"model_name_or_path": "qwen2.5-7b", "use_vllm": True,
                               "num_processes": 4, "gradient_checkpointing": True}))
    kw = "gradient_checkpointing_kwargs.use_reentrant"

    def off(version: str | None, *overrides: str, launch: Path | None = None) -> bool:
        q = import_trl(cfg, list(overrides), launch, version)
        return "--no-recompute-early-stop" in dict(q.flags)

    assert off("2025-02-05") and not off("2025-02-05", f"{kw}=false")
    assert not off(None) and off(None, f"{kw}=true")
    z3 = tmp_path / "zero3.yaml"
    z3.write_text(json.dumps({"num_processes": 4, "distributed_type": "DEEPSPEED",
                              "deepspeed_config": {"zero_stage": 3}}))  # fmt: skip
    assert off(None, "use_peft=true", launch=z3) and off("0.28.0", "use_peft=true", launch=z3)
    assert not off("0.27.0", "use_peft=true", launch=z3)
    assert not off(None, launch=z3)


def test_trl_peft_kept_non_reentrant_is_stated_over_the_presets_rule(tmp_path: Path) -> None:
    """GRPOTrainer forces use_reentrant=True for PEFT only under DeepSpeed ZeRO-3 and from
    PR 4951 (``grpo_trainer.py`` @f2cd5771: ``args.deepspeed_plugin.zero_stage == 3``); TRL's
    preset applies that rule to any --zero 3 with adapters, so an imported run whose checkpoint
    stays non-reentrant (adapters under FSDP, or TRL 0.27.0 under DeepSpeed) gives
    --recompute-early-stop and is priced with the early stop, not as the preset's rule."""
    cfg = tmp_path / "grpo.yaml"
    cfg.write_text(json.dumps({"model_name_or_path": "qwen2.5-7b", "use_vllm": True,
                               "gradient_checkpointing": True, "use_peft": True}))
    fsdp, z3 = tmp_path / "fsdp.yaml", tmp_path / "zero3.yaml"
    fsdp.write_text(json.dumps({"num_processes": 4, "distributed_type": "FSDP"}))
    z3.write_text(json.dumps({"num_processes": 4, "distributed_type": "DEEPSPEED",
                              "deepspeed_config": {"zero_stage": 3}}))  # fmt: skip

    def early(launch: Path, version: str | None) -> bool | None:
        flags = dict(import_trl(cfg, [], launch, version).flags)
        return True if "--recompute-early-stop" in flags else \
            False if "--no-recompute-early-stop" in flags else None  # fmt: skip

    assert early(fsdp, None) is True and early(z3, "0.27.0") is True
    assert early(z3, None) is False and early(z3, "0.28.0") is False
    given = TrainLayout(zero="3", ckpt="full", recompute_early_stop=True)  # the flag, priced
    opt = step_options(Deployment(framework="trl", lora=LoraSpec(rank=16), train=given))
    assert opt is not None and opt.recompute_early_stop


def test_a_frozen_models_kind_names_no_early_stop() -> None:
    """Only trained models recompute: a Gemma 2 reward model (a post-FFN norm) beside a Llama
    actor and critic adds no note on where Gemma's rerun ends; a Gemma critic does."""
    base = ["ppo", "-m", "llama-3.2-1b", "--framework", "verl", "--gpus", "8", "--ckpt",
            "full", "--json"]
    for role, late in (("--reward", False), ("--critic", True)):
        result = runner.invoke(app, [*base, role, "gemma-2-2b"])
        assert result.exit_code == 0, result.output
        notes = json.loads(result.stdout)["notes"]
        assert EARLY_STOP_NOTE in notes and (LATE_STOP_NOTE in notes) is late
