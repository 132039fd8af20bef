"""OmegaConf's ``${oc.select:key,default}`` in a framework config (rlmcost.frameworks.config).

verl's generated configs (``verl/trainer/config/_generated_ppo_trainer.yaml`` @b178a3cd5: 52
of them; the Megatron one 66) default one key to another through it, e.g.
``rollout.log_prob_use_dynamic_bsz: ${oc.select:actor_rollout_ref.actor.use_dynamic_bsz,false}``;
OmegaConf returns the selected key's value when it is set and the default (a YAML scalar,
``null`` when none is given) otherwise. Other resolvers stay an error (``${oc.env:...}``)."""

from __future__ import annotations

import pytest

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.verl import import_verl


def _reader(**flat: object) -> Reader:
    return Reader(flat=dict(flat), where="test config")


@pytest.mark.parametrize(("value", "expected"), [
    ("${oc.select:a.b,false}", 7),  # set: its value
    ("${oc.select:a.c,false}", False),  # unset: the default, a YAML scalar
    ("${oc.select:a.c,1}", 1),
    ("${oc.select:a.c,null}", None),
    ("${oc.select:a.c}", None),  # no default: None
    ("${oc.select:a.c,${a.b}}", 7),  # a default that refers to another key
])  # fmt: skip
def test_select_takes_the_key_else_the_default(value: str, expected: object) -> None:
    assert _reader(**{"a.b": 7, "x": value}).raw("x") == expected


def test_other_resolvers_stay_an_error() -> None:
    with pytest.raises(SpecError, match="oc.select"):
        _reader(x="${oc.env:HOME}").raw("x")


def test_a_generated_verl_config_imports_as_the_values_written_out(tmp_path) -> None:
    """The same run, its rollout's dynamic batching and n given through ``oc.select`` as
    verl's generated config gives them, or written out: one query."""
    base = """\
actor_rollout_ref:
  model: {path: Qwen/Qwen2.5-0.5B}
  actor: {use_dynamic_bsz: true, ppo_mini_batch_size: 16, ppo_max_token_len_per_gpu: 8192}
  rollout:
    n: 4
    name: vllm
    log_prob_use_dynamic_bsz: %s
    log_prob_max_token_len_per_gpu: 8192
algorithm:
  adv_estimator: grpo
  rollout_n: %s
data: {train_batch_size: 32, max_prompt_length: 256, max_response_length: 512}
trainer: {n_gpus_per_node: 8, nnodes: 1}
"""
    given, written = tmp_path / "given.yaml", tmp_path / "written.yaml"
    given.write_text(base % ("${oc.select:actor_rollout_ref.actor.use_dynamic_bsz,false}",
                             "${oc.select:actor_rollout_ref.rollout.n,1}"))
    written.write_text(base % ("true", "4"))
    one, two = import_verl(given, []), import_verl(written, [])
    assert one.flags == two.flags and ("--group", 4) in one.flags
