"""A framework preset fits the actor it is given: the framework's own example for this very
model before the size tiers (rlmcost/frameworks/preset_data/model_examples.py), a size tier's
degrees that do not hold for the actor lowered to the largest that does
(rlmcost/frameworks/preset_fit.py), and every built-in model under every preset evaluated
without an error.

Independent references:
- NeMo RL examples/configs/recipes/llm/performance/grpo-nemotron3-super-120BA12B-32n8g.yaml
  and examples/configs/grpo_math_1B.yaml (NVIDIA-NeMo/RL @7ea279abf, stored as they are under
  tests/data/frameworks/nemo_rl_nemotron3_super), read by `rlmcost import nemo-rl`;
- slime scripts/run-glm4.7-30B-A3B.sh (THUDM/slime @624b824a, tests/data/frameworks/
  slime_glm4.7-30B-A3B), read by `rlmcost import slime`;
- the models' config.json head, KV-head and expert counts (phi-4: 40 heads, 10 KV heads;
  Mixtral-8x22B: 8 experts; Nemotron 3 Super: 8 Mamba-2 groups), which fix the degrees that
  divide them: TP 2 is the largest divisor of 8 dividing 40 and 10 (4 does not divide 10).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_moe_tiers import _invoke, _value  # the CLI's --json, a field of it (tests/ on path)
from test_moe_tiers import _same as _same_fields
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv
from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.launch_scripts import import_slime_script
from rlmcost.frameworks.preset_data.model_examples import (
    NEMO_RL_SUPER,
    NEMOTRON_SUPER_FROM,
    SLIME_GLM_FLASH,
)
from rlmcost.frameworks.preset_model import OPTION_FIELDS, Sized
from rlmcost.run.defaults import actor_params, actor_tier
from rlmcost.specs import models

runner = CliRunner()
DATA = Path(__file__).parent / "data" / "frameworks"
SUPER = (DATA / "nemo_rl_nemotron3_super" / "examples" / "configs" / "recipes" / "llm" /
         "performance" / "grpo-nemotron3-super-120BA12B-32n8g.yaml")  # fmt: skip
GLM = DATA / "slime_glm4.7-30B-A3B" / "scripts" / "run-glm4.7-30B-A3B.sh"


def _same(tier: Sized, tiered: dict, imported: dict, skip: tuple[str, ...] = ()) -> None:
    """test_moe_tiers's field-by-field check, the algorithm's options left out (an example's
    options are checked apart where it sets them)."""
    options = tuple(d.field for d in tier.defaults if d.field in OPTION_FIELDS)
    _same_fields(tier, tiered, imported, (*skip, *options))


def test_nemotron_super_takes_nemo_rls_super_recipe_as_the_importer_reads_it() -> None:
    """The recipe's trainer (TP 4, SP, EP 32), engine (vLLM TP 8 at 0.7) and options, not
    the Qwen3-235B recipe's (whose vLLM TP 16 does not divide Super's 8 Mamba-2 groups). The
    imported recipe gives its packed budget as --max-tokens-per-gpu, the tier NeMo RL's
    micro-batch of 1 (skipped), and its samples per step as mini-batches (32 x 8 = 256 =
    train_global_batch_size, the tier's global batch)."""
    assert actor_tier("nemo-rl", "nemotron-3-super-120b-a12b") == NEMO_RL_SUPER
    imported = _invoke("import", "nemo-rl", str(SUPER), "-H", "h100")["run"]
    tiered = _invoke("rlvr", "-m", "nemotron-3-super-120b-a12b", "-H", "h100", "--gpus", "256",
                     "-B", "32", "-K", "8")["run"]  # fmt: skip
    _same(NEMO_RL_SUPER, tiered, imported, ("train.micro_batch", "forward.micro_batch"))
    assert tiered["algorithm"]["global_batch"] == 256
    assert tiered["algorithm"]["recompute_logprobs"] is imported["algorithm"][
        "recompute_logprobs"] is False  # fmt: skip
    text = " ".join(runner.invoke(app, ["rlvr", "-m", "nemotron-3-super-120b-a12b", "-H",
                                        "h100"], env={"COLUMNS": "400"}).output.split())
    assert "its example for this actor's model" not in text  # the default deployment's words
    assert "grpo-nemotron3-super-120BA12B-32n8g.yaml" in text


def test_the_super_recipe_is_for_super_alone() -> None:
    """model_type nemotron_h from the geometric mean of Nano 30B-A3B's and Super's sizes:
    the Nano keeps its size tier; a mixture of experts of another type keeps the 235 B one."""
    nano, sup = actor_params("nemotron-3-nano-30b-a3b"), actor_params("nemotron-3-super-120b-a12b")
    assert nano is not None and sup is not None
    mean = (nano * sup) ** 0.5
    assert abs(NEMOTRON_SUPER_FROM - mean) / mean < 0.002 and nano < NEMOTRON_SUPER_FROM < sup
    assert actor_tier("nemo-rl", "nemotron-3-nano-30b-a3b") != NEMO_RL_SUPER
    assert "qwen3-235b" in actor_tier("nemo-rl", "glm-4.5-air").example


def test_glm_flash_takes_slimes_glm_script_as_the_importer_reads_it() -> None:
    q = import_slime_script(GLM, [], [], None, None)
    argv = q.argv()
    argv[argv.index("--gpus") + 1] = "16"  # Megatron's expert grid: 1 x 8 x 2 (the script's 8
    imported = json.loads(run_from_argv(q.algorithm, argv).to_json_text())  # GPUs refused)
    tiered = _invoke("rlvr", "-m", "glm-4.7-flash", "--framework", "slime", "--gpus", "16")["run"]
    assert actor_tier("slime", "glm-4.7-flash") == SLIME_GLM_FLASH
    _same(SLIME_GLM_FLASH, tiered, imported)


@pytest.mark.parametrize(("model", "fw", "field", "want"), [
    ("phi-4", "slime", "train.tp", 2),  # run-qwen3-32B.sh TP 8 over 40 heads, 10 KV heads
    ("phi-4", "slime", "engine.tp", 2),  # its SGLang TP 8 the same
    ("phi-3-medium", "slime", "train.tp", 2),
    ("phi-3-medium-128k", "slime", "train.tp", 2),
    ("mixtral-8x22b", "nemo-rl", "train.ep", 8),  # grpo-qwen3-235b-16n8g.yaml EP 16, 8 experts
    ("mixtral-8x22b", "slime", "train.ep", 8),  # run-qwen3-235B-A22B.sh EP 16
])  # fmt: skip
def test_a_tier_degree_the_actor_cannot_take_is_the_largest_it_can(model, fw, field, want):
    run = json.loads(run_from_argv("grpo", ["-m", model, "--framework", fw, "-H",
                                            "h100"]).to_json_text())  # fmt: skip
    assert _value(run, field) == want
    tier = actor_tier(fw, model)
    assert tier is not None and any(f"-> {want} (" in said for said in tier.fitted)


def test_a_degree_the_user_gives_keeps_its_error() -> None:
    with pytest.raises(SpecError, match="tp=8 must divide heads=40 and kv heads=10"):
        evaluate_deployment(run_from_argv("grpo", ["-m", "phi-4", "--framework", "slime",
                                                   "--tp", "8"]))  # fmt: skip
    # vLLM TP 16 over Super's 8 Mamba-2 groups: named, with the degrees that divide them
    with pytest.raises(SpecError, match=r"16 does not divide the 8 linear-attention key heads "
                       r"\(Mamba-2 groups.*choose a degree that divides 8 \(1, 2, 4, 8\)"):
        evaluate_deployment(run_from_argv("grpo", ["-m", "nemotron-3-super-120b-a12b", "-H",
                                                   "h100", "--rollout-tp", "16"]))  # fmt: skip


def test_every_built_in_model_runs_under_every_preset() -> None:
    """Each of `rlmcost models` x {the default deployment, verl, slime, nemo-rl, openrlhf,
    trl} on H100s, evaluated: no error (a layout that does not fit in memory is a result,
    not an error). Before the model examples and the fit, nine of these stopped (Mixtral-
    8x22B, GLM-4.7-Flash, phi-3-medium(-128k), phi-4, Nemotron 3 Super)."""
    failed = []
    for spec in models():
        for fw in (None, "verl", "slime", "nemo-rl", "openrlhf", "trl"):
            argv = ["-m", spec.name, "-H", "h100", *(["--framework", fw] if fw else [])]
            try:
                evaluate_deployment(run_from_argv("grpo", argv))
            except SpecError as exc:
                failed.append(f"{spec.name} {fw}: {exc}")
    assert not failed, "\n".join(failed)
