"""A NeMo RL recipe's ``defaults:`` merged as NeMo RL merges it
(rlmcost.frameworks.nemo_rl_defaults).

Source: ``load_config_with_inheritance`` and ``merge_with_override`` in
``nemo_rl/utils/config.py`` @7ea279abf: parents relative to the config's directory, loaded
with their own defaults first, merged in order, the config over them with ``OmegaConf.merge``;
a top-level ``_override_: true`` mapping replaces the base's; ``???`` keeps the base's value.
The recipes under ``examples/configs/recipes/llm/`` inherit from ``../../grpo_math_1B.yaml``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.nemo_rl_defaults import load_with_defaults, merge

BASE = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"


def _recipe(tmp_path: Path, body: str) -> Path:
    """A recipe two directories below a copy of the base config, as NeMo RL lays them out."""
    shutil.copy(BASE, tmp_path / "grpo_math.yaml")
    (tmp_path / "recipes" / "llm").mkdir(parents=True)
    recipe = tmp_path / "recipes" / "llm" / "recipe.yaml"
    recipe.write_text("defaults: ../../grpo_math.yaml\n" + body)
    return recipe


def test_a_recipe_imports_as_its_base_with_its_keys_overridden(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path, "grpo:\n  num_prompts_per_step: 16\n"
                               "policy:\n  train_global_batch_size: 128\n")
    child = import_nemo_rl(recipe)
    by_hand = import_nemo_rl(BASE, ["grpo.num_prompts_per_step=16",
                                    "policy.train_global_batch_size=128"])
    assert child.flags == by_hand.flags and ("--batch", 16) in child.flags
    assert any("defaults: merged" in n and "grpo_math.yaml" in n for n in child.notes)


def test_chains_lists_overrides_and_missing_values(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("x: {p: 1, q: 2}\ny: 1\nz: [1, 2]\n")
    (tmp_path / "b.yaml").write_text("defaults: a.yaml\nx: {q: 3}\nz: [3]\n")
    (tmp_path / "c.yaml").write_text("w: 5\n")
    (tmp_path / "d.yaml").write_text("defaults: [b.yaml, c.yaml]\nx: {_override_: true, r: 4}\n"
                                     "y: '???'\n")
    data, bases = load_with_defaults(tmp_path / "d.yaml")
    assert data == {"x": {"r": 4}, "y": 1, "z": [3], "w": 5}
    assert [Path(b).name for b in bases] == ["a.yaml", "b.yaml", "c.yaml"]
    # the marker is read on the top-level keys only, as merge_with_override reads it
    assert merge({"a": {"b": {"c": 1, "d": 2}}}, {"a": {"b": {"_override_": True, "c": 3}}}) == \
        {"a": {"b": {"c": 3, "d": 2, "_override_": True}}}


@pytest.mark.parametrize(("files", "message"), [
    ({"r.yaml": "defaults: nowhere.yaml\n"}, "not found at"),
    ({"r.yaml": "defaults: r.yaml\n"}, "levels of defaults"),
    ({"r.yaml": "defaults: {a: 1}\n"}, "must name a config file"),
])  # fmt: skip
def test_bad_inheritance_is_one_line(tmp_path: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(SpecError, match=message):
        load_with_defaults(tmp_path / "r.yaml")


def test_async_colocated_inference_needs_megatron_generation() -> None:
    """NeMo RL PR 2884 (8863ebeff) lets async GRPO share the trainers' GPUs with Megatron
    generation only (grpo.py ``async_grpo_train`` asserts a ``MegatronGeneration``); on vLLM
    the importer refuses as NeMo RL does (tests/test_megatron_generation.py imports the
    Megatron recipe)."""
    with pytest.raises(SpecError, match="only on the Megatron generation backend"):
        import_nemo_rl(BASE, ["grpo.async_grpo.enabled=true"])
