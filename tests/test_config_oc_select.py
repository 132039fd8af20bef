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


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("critic.forward", "${.ppo}", 32768),  # a sibling (verl's critic.forward_max_token_len_per_gpu)
    ("critic.micro", "${oc.select:.mb,null}", 2),  # verl's critic ppo_micro_batch_size_per_gpu
    ("critic.opt.x", "${..ppo}", 32768),  # the parent's sibling
    ("t.dyn.tokens", "${mul:${..seq}, ${..mb}}", 8192 * 4),  # NeMo RL's teacher dynamic batching
    ("t.gen.vllm.len", "${...seq}", 8192),  # distillation_math.yaml's vllm_cfg.max_model_len
    ("critic.forward", "${ppo}", 1),  # no dot: from the root
    ("critic.micro", "${oc.select:.unset,3}", 3),
    ("critic.micro", "${oc.select:name,vllm}", "vllm"),  # a missing ??? selects the default
])  # fmt: skip
def test_relative_references_start_at_the_keys_parent(key: str, value: str,
                                                      expected: object) -> None:  # fmt: skip
    """OmegaConf's relative interpolation (``${.x}``, ``${..x}``; the grammar's leading dots,
    also in ``oc.select``'s key): verl's critic.yaml @b178a3cd5 (``forward_max_token_len_per_gpu:
    ${.ppo_max_token_len_per_gpu}``, ``${oc.select:.ppo_micro_batch_size,null}``) and NeMo RL's
    distillation_math.yaml @7ea279abf (``${mul:${..max_total_sequence_length}, ...}``,
    ``${...max_total_sequence_length}``); the values are OmegaConf 2.3's for the same tree."""
    flat = {"ppo": 1, "name": "???", "critic.ppo": 32768, "critic.mb": 2, "t.seq": 8192,
            "t.mb": 4, key: value}  # fmt: skip
    assert _reader(**flat).raw(key) == expected


def test_a_reference_above_the_top_or_to_a_mapping_is_an_error() -> None:
    with pytest.raises(SpecError, match="above the config's top level"):
        _reader(**{"a.b": "${...x}", "x": 1}).raw("a.b")
    # OmegaConf selects the mapping itself (verl's rollout.mtp: ${oc.select:...model.mtp,null}),
    # not the default; rlmcost reads values only and says so
    with pytest.raises(SpecError, match="mapping 'm.mtp'"):
        _reader(**{"m.mtp.enable": True, "r.mtp": "${oc.select:m.mtp,null}"}).raw("r.mtp")
    with pytest.raises(SpecError, match="mapping 'm.mtp'"):
        _reader(**{"m.mtp.enable": True, "r.mtp": "${m.mtp}"}).raw("r.mtp")


@pytest.mark.parametrize(("override", "expected"), [
    ("policy=5", {"policy": 5, "x": None}),  # a value replaces the mapping whole
    ("policy=null", {"policy": None, "x": None}),
    ("policy={}", {"policy.a": 1, "policy.b.c": 2, "x": None}),  # a mapping merges: nothing
    ("policy={a: 3}", {"policy.a": 3, "policy.b.c": 2, "x": None}),  # its other keys kept
    ("policy={b: {e: 5}}", {"policy.a": 1, "policy.b.c": 2, "policy.b.e": 5, "x": None}),
    ("policy.a={z: 1}", {"policy.a.z": 1, "policy.b.c": 2, "x": None}),  # a value -> a mapping
    ("x={y: 1}", {"policy.a": 1, "policy.b.c": 2, "x.y": 1}),
    ("~policy.b", {"policy.a": 1, "x": None}),
    # OmegaConf.update: "if next_root is a primitive ... replace it with an empty map"
    ("+x.y=1", {"policy.a": 1, "policy.b.c": 2, "x.y": 1}),
    ("+policy.a.z=1", {"policy.a.z": 1, "policy.b.c": 2, "x": None}),
])  # fmt: skip
def test_overrides_merge_and_replace_as_hydra_applies_them(override: str,
                                                           expected: dict) -> None:  # fmt: skip
    """``key=value`` on the command line after a verl or NeMo RL config, as Hydra 1.3 applies
    it (``ConfigLoaderImpl._apply_overrides_to_config``: ``OmegaConf.update(..., merge=True)``;
    each expected tree is what Hydra 1.3.2 with OmegaConf 2.3 made of {policy: {a: 1, b: {c:
    2}}, x: null}): a mapping merges into the mapping there, a value replaces it."""
    from rlmcost.frameworks.config import apply_overrides

    flat = {"policy.a": 1, "policy.b.c": 2, "x": None}
    assert apply_overrides(flat, [override], "test config") == expected


@pytest.mark.parametrize(("value", "expected"), [
    ("${oc.select:a.c,[]}", []),  # verl's ${oc.select:...profiler.ranks,[]}
    ("${oc.select:a.c,${a.n}}", None),  # a default referring to a null: null, not 'None'
    ("${oc.select:a.c,${a.l}}", [1, 2]),
    ("p_${a.n}", "p_None"),  # inside text: str(), as OmegaConf writes it
])  # fmt: skip
def test_resolver_arguments_keep_their_types(value: str, expected: object) -> None:
    """OmegaConf 2.3 resolves each of these over {a: {n: null, l: [1, 2]}} to the value
    given: a resolver's argument keeps the type of a nested reference's value or of a flow
    list, where a string interpolation writes the value out."""
    assert _reader(**{"a.n": None, "a.l": [1, 2], "x": value}).raw("x") == expected
