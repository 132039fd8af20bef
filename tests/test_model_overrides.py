"""A model reference with config.json overrides (rlmcost.specs.model_overrides), and the
importers that write one: NeMo RL's ``policy.hf_config_overrides``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.specs.registry import get_model

NEMO = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"
runner = CliRunner()

# NVIDIA-NeMo/RL examples/configs/recipes/llm/dapo-qwen2.5-7b.v2.yaml @7ea279abf (and
# dapo-qwen2.5-7b.yaml at v0.4.0-v0.6.0): Qwen2.5-Math-7B, whose config.json has
# max_position_embeddings 4096, trained at 16,384 tokens with the override
#   policy:
#     model_name: Qwen/Qwen2.5-Math-7B
#     hf_config_overrides:
#       max_position_embeddings: 16384
#     max_total_sequence_length: 16384
DAPO_7B = ["policy.model_name=Qwen/Qwen2.5-Math-7B",
           "policy.hf_config_overrides.max_position_embeddings=16384",
           "policy.max_total_sequence_length=16384"]  # fmt: skip


def test_a_reference_with_brackets_is_the_model_with_its_context_overridden() -> None:
    base = get_model("Qwen/Qwen2.5-Math-7B")
    raised = get_model("Qwen/Qwen2.5-Math-7B[max_position_embeddings=16384]")
    assert base.max_context == 4096  # Qwen/Qwen2.5-Math-7B config.json
    assert raised.max_context == 16384
    assert raised.model_copy(update={"max_context": 4096}) == base  # nothing else changes
    assert base.context_note(16384) is not None and raised.context_note(16384) is None


@pytest.mark.parametrize(("ref", "says"), [  # each message names what is wrong
    ("qwen2.5-7b[rope_theta=1]", "reads max_position_embeddings"),
    ("qwen2.5-7b[max_position_embeddings=nan]", "whole number of positions"),
    ("qwen2.5-7b[max_position_embeddings=0]", "whole number of positions"),
    ("qwen2.5-7b[max_position_embeddings]", "whole number of positions"),
    ("qwen2.5-7b]", "NAME[key=value,...]"),
    ("gpt-3-175b[max_position_embeddings=4096]", "2048 learned position embeddings"),
])  # fmt: skip
def test_a_bad_override_is_a_clear_error(ref: str, says: str) -> None:
    with pytest.raises(SpecError, match=re.escape(says)):
        get_model(ref)


def test_nemo_rl_hf_config_overrides_carry_the_context_onto_the_model() -> None:
    """The importer read the model name alone and kept the checkpoint's 4,096 positions, then
    said the recipe's 16,384-token sequences were past the model's context."""
    q = import_nemo_rl(NEMO, DAPO_7B, prompt_len=2048)
    model = dict(q.flags)["--model"]
    assert model == "Qwen/Qwen2.5-Math-7B[max_position_embeddings=16384]"
    assert get_model(model).max_context == 16384
    assert "policy.hf_config_overrides.max_position_embeddings" not in q.ignored
    plain = import_nemo_rl(NEMO, [DAPO_7B[0], DAPO_7B[2]], prompt_len=2048)
    assert dict(plain.flags)["--model"] == "Qwen/Qwen2.5-Math-7B"


def test_nemo_rl_import_of_the_dapo_recipe_is_within_the_model_context() -> None:
    res = runner.invoke(app, ["import", "nemo-rl", str(NEMO), *DAPO_7B, "--prompt-len", "2048"])
    assert res.exit_code == 0, res.output
    assert "Qwen/Qwen2.5-Math-7B[max_position_embeddings=16384]" in res.output
    assert "exceed its trained context" not in res.output
    before = runner.invoke(app, ["import", "nemo-rl", str(NEMO), DAPO_7B[0], DAPO_7B[2],
                                 "--prompt-len", "2048"])  # fmt: skip
    assert "exceed its trained context of 4096" in " ".join(before.output.split())


def test_nemo_rl_override_out_of_range_is_refused() -> None:
    with pytest.raises(SpecError, match="max_position_embeddings"):
        import_nemo_rl(NEMO, ["policy.hf_config_overrides.max_position_embeddings=-5"])



def test_a_run_file_carries_the_override_and_says_it_on_its_command_line() -> None:
    from rlmcost.run.spec import Run

    ref = "Qwen/Qwen2.5-Math-7B[max_position_embeddings=16384]"
    run = Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": ref}})
    assert f"--model '{ref}'" in run.to_command()
    assert Run.from_yaml(run.to_yaml()).models.actor == ref


# NVIDIA-NeMo/RL examples/configs/recipes/llm/grpo-qwen2.5-1.5B-4n8g-megatron-yarn-256k.yaml
# @7ea279abf: max_total_sequence_length 262144 and
#   hf_config_overrides:
#     rope_scaling:
#       rope_type: yarn
#       factor: ${div:${policy.max_total_sequence_length},
#         ${policy.hf_config_overrides.rope_scaling.original_max_position_embeddings}}
#       original_max_position_embeddings: 131072
# (NeMo RL's div resolver: nemo_rl/utils/config.py, a / b)
YARN = ["policy.max_total_sequence_length=262144",
        "policy.hf_config_overrides.rope_scaling.rope_type=yarn",
        "policy.hf_config_overrides.rope_scaling.factor=${div:${policy.max_total_sequence_"
        "length},${policy.hf_config_overrides.rope_scaling.original_max_position_embeddings}}",
        "policy.hf_config_overrides.rope_scaling.original_max_position_embeddings=131072",
        ]  # fmt: skip


def test_nemo_rl_yarn_rope_scaling_sets_the_context() -> None:
    """YaRN's context is original positions x factor (262,144 here): the import said the
    sequences passed the checkpoint's context, and ${div:...} was not read."""
    q = import_nemo_rl(NEMO, YARN, prompt_len=1024)
    assert dict(q.flags)["--model"] == "qwen2.5-7b[max_position_embeddings=262144]"
    assert any("YaRN over 131,072 original positions x factor 2" in n for n in q.notes)
    explicit = import_nemo_rl(NEMO, [*YARN, "policy.hf_config_overrides.max_position_embeddings="
                                     "200000"], prompt_len=1024)  # fmt: skip
    assert dict(explicit.flags)["--model"].endswith("[max_position_embeddings=200000]")
    zero = [*YARN[:2], "policy.hf_config_overrides.rope_scaling.factor=${div:4,0}", YARN[3]]
    with pytest.raises(SpecError, match="divides '4,0'; give two numbers, the second not 0"):
        import_nemo_rl(NEMO, zero, prompt_len=1024)


def test_verl_override_config_carries_the_context_onto_the_model() -> None:
    """verl hands ``actor_rollout_ref.model.override_config`` to the model's config
    (verl/workers/fsdp_workers.py @b178a3cd lines 356-369: ``override_config_kwargs.update``,
    ``update_model_config``); its DAPO scripts raise Qwen2.5-Math-7B's 4,096 positions with
    ``+actor_rollout_ref.model.override_config.max_position_embeddings=32768``
    (examples/gmpo_trainer/test_dapo_7b_math.sh, verl/experimental/fully_async_policy/shell/
    dapo_7b_math_fsdp2_16_16.sh). The importer had listed the key as read and dropped it."""
    from rlmcost.frameworks.verl import import_verl

    verl = Path(__file__).parent / "data" / "frameworks" / "verl_grpo.yaml"
    given = ["actor_rollout_ref.model.path=Qwen/Qwen2.5-Math-7B",
             "+actor_rollout_ref.model.override_config.max_position_embeddings=32768"]
    model = dict(import_verl(verl, given).flags)["--model"]
    assert model == "Qwen/Qwen2.5-Math-7B[max_position_embeddings=32768]"
    assert get_model(model).max_context == 32768
    plain = import_verl(verl, given[:1])
    assert dict(plain.flags)["--model"] == "Qwen/Qwen2.5-Math-7B"
