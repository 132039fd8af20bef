"""Megatron-core's MoE expert capacity factor (rlmcost/parallel/moe_capacity.py): the capped
and padded expert loads, the refusals, the CLI flags, the importers and the fast path's keys.

Sources: Megatron-LM @d98e8a64dd megatron/core/transformer/moe/moe_utils.py (``get_capacity``:
ceil(tokens x topk / experts x CF); ``apply_router_token_dropping``), token_dispatcher.py
(``MoEAlltoAllTokenDispatcher.preprocess``: padded, capacity x tp_size x ep_size rows per local
expert), transformer_config.py ``__post_init__`` (a negative factor is dropless; padding needs a
factor); NeMo RL v0.3.0-v0.7.0 nemo_rl/models/megatron/setup.py (no capacity key handed on)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nemo_rl_moe import import_qwen3_moe
from typer.testing import CliRunner

from rlmcost import memo
from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.slime import import_slime
from rlmcost.frameworks.verl import import_verl
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.moe_capacity import (
    capacity_rows,
    capped_count,
    check_capacity,
    expert_capacity,
)
from rlmcost.perf.moe_imbalance import busiest_rank_count

DATA = Path(__file__).parent / "data" / "frameworks"


def test_capacity_caps_the_busiest_rank_and_padding_fills_every_expert() -> None:
    # Qwen3-30B-A3B (128 experts, top-8) at 4096 tokens per rank, EP 8, TP = ETP = 1:
    # balanced rows per local expert 4096 x 8 x 8 / 128 = 2048; at imbalance 1.3 the busiest
    # rank's 2663 (ceil 2662.4); capacity ceil(4096 x 8 / 128 x 1.0) = 256 per source, x 8 = 2048
    lay = Layout(dp=8, ep=8, moe_capacity_factor=1.0)
    assert expert_capacity(4096, 8, 128, 1.0) == 256
    cap = capacity_rows(lay, 4096, 8, 128)
    assert cap == 2048
    busiest = busiest_rank_count(2048, 1.3, 8)
    assert busiest == 2663
    assert capped_count(busiest, 2048, 2048, cap, pad=False) == 2048  # capped at CF 1.0
    assert capped_count(busiest, 2048, 2048, None, pad=False) == 2663  # dropless
    # a factor above the imbalance drops nothing: CF 1.5 -> capacity 384 x 8 = 3072 > 2663
    wide = capacity_rows(lay.with_(moe_capacity_factor=1.5), 4096, 8, 128)
    assert wide == 3072 and capped_count(busiest, 2048, 2048, wide, pad=False) == 2663
    # padded: exactly the capacity whatever the routing, balanced (1.0) or not
    assert capped_count(2048, 2048, 2048, wide, pad=True) == 3072
    assert capped_count(busiest, 2048, 2048, wide, pad=True) == 3072
    # bytes scale alike: the rank's 2048 x 2 x 2048 B of copies -> CF 1.5 x them, padded
    b = 2048 * 2 * 2048
    assert capped_count(b, b, 2048, wide, pad=True) == b * 3 // 2
    # TP 2 splits the router's tokens: ceil(2048 x 8 / 128) = 128 per source, ETP 2 x EP 8
    assert capacity_rows(Layout(dp=8, tp=2, ep=8, moe_capacity_factor=1.0), 4096, 8, 128) == 2048


@pytest.mark.parametrize(("factor", "pad", "match"), [
    (0.0, False, "must be a number > 0"),
    (-1.0, False, "must be a number > 0"),
    (float("nan"), False, "must be a number > 0"),
    (None, True, "needs --moe-capacity-factor"),  # Megatron-core raises too
])  # fmt: skip
def test_bad_capacity_settings_are_refused(factor: Any, pad: bool, match: str) -> None:
    with pytest.raises(SpecError, match=match):
        check_capacity(Layout(moe_capacity_factor=factor, moe_pad_to_capacity=pad))


TRAIN = ["train", "-m", "qwen3-30b-a3b", "--gpus", "16", "--pp", "2", "--ep", "8", "--seq",
         "8192", "--batch", "128", "-H", "h800", "--json"]  # fmt: skip


def _train(*extra: str) -> dict[str, Any]:
    out = CliRunner().invoke(app, [*TRAIN, *extra])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_train_takes_the_capacity_flags() -> None:
    plain, capped = _train(), _train("--moe-capacity-factor", "1.0")
    padded = _train("--moe-capacity-factor", "1.25", "--moe-pad-to-capacity")
    # `rlmcost train` routes evenly (imbalance 1.0): CF 1.0 drops nothing, the step is equal
    assert capped["step_time_s"] == plain["step_time_s"]
    assert any("capacity factor 1 " in n for n in capped["notes"])
    # padded to 1.25 x the mean: the experts' GEMMs and all-to-all grow
    assert padded["step_time_s"] > plain["step_time_s"]
    assert any("padded" in n for n in padded["notes"])
    for bad in (["--moe-capacity-factor", "0"], ["--moe-pad-to-capacity"]):
        res = CliRunner().invoke(app, [*TRAIN, *bad])
        assert res.exit_code == 2 and "Traceback" not in res.output


RL = ["grpo", "-m", "qwen3-30b-a3b", "--framework", "nemo-rl", "--gpus", "16", "--tp", "2",
      "--ep", "8", "--zero", "1", "--forward-micro-batch", "2", "--json"]  # fmt: skip
# ZeRO-1: NeMo RL's Megatron trainer. Log-prob micro-batches of 2 sequences (grpo_math_8B.yaml's;
# the preset's 32 B recipe takes 1 from 16.2 B): at one packed sequence a forward of this MoE
# model sits on the host floor, where the capacity factor does not move it.


def test_rl_commands_take_the_capacity_flags_and_cap_the_imbalance() -> None:
    runner = CliRunner()

    def run(*extra: str) -> dict[str, Any]:
        out = runner.invoke(app, [*RL, *extra])
        assert out.exit_code == 0, out.output
        return json.loads(out.stdout)

    def phase(d: dict[str, Any], name: str) -> float:
        return next(p["time_s"] for p in d["phases"] if p["name"] == name)

    plain, capped = run(), run("--moe-capacity-factor", "1.0")
    assert capped["run"]["deployment"]["train"]["moe_capacity_factor"] == 1.0
    assert plain["run"]["deployment"]["train"]["moe_capacity_factor"] is None
    # the framework's EP-rank imbalance (1.30) capped at 1.0: the log-prob forwards (above the
    # host floor at NeMo RL's packed micro-batches) get faster
    assert phase(capped, "old log-prob") < phase(plain, "old log-prob")
    assert any("capacity factor 1 " in n for n in capped["notes"])
    for bad in (["--moe-pad-to-capacity"],  # no factor
                ["--moe-capacity-factor", "1", "--moe-pad-to-capacity", "--ep-dispatcher",
                 "deepep"],  # Megatron-core refuses padding with DeepEP
                ):  # fmt: skip
        res = runner.invoke(app, [*RL, *bad])
        assert res.exit_code == 2 and "Traceback" not in res.output, bad
    # NeMo RL's DTensor worker (ZeRO-3) runs a Hugging Face model: no capacity there
    zero3 = [w if w != "1" or RL[i - 1] != "--zero" else "3" for i, w in enumerate(RL)]
    res = runner.invoke(app, [*zero3, "--moe-capacity-factor", "1"])
    assert res.exit_code == 2 and "Hugging Face model" in res.output


def test_capacity_round_trips_through_the_command() -> None:
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.run.command import to_command

    argv = RL[1:-1]
    run = run_from_argv("grpo", [*argv, "--moe-capacity-factor", "1.25", "--moe-pad-to-capacity"])
    assert run.deployment.train.moe_capacity_factor == 1.25
    assert run.deployment.train.moe_pad_to_capacity
    cmd = to_command(run)
    assert "--moe-capacity-factor 1.25" in cmd and "--moe-pad-to-capacity" in cmd
    again = run_from_argv("grpo", shlex.split(cmd)[2:])
    assert again.deployment.train == run.deployment.train
    assert "--moe-capacity-factor" not in to_command(run_from_argv("grpo", argv))


def test_fast_path_keys_follow_the_capacity() -> None:
    """The group and forward keys hold the trainer's layout (group_key: every deployment field
    not left out; forward_key: the Layout): deployments that differ only in the capacity get
    their own estimates, each as the evaluation that keeps nothing gives it."""
    from rlmcost.evaluation.batch import evaluate_many
    from rlmcost.evaluation.deployment import evaluate_deployment
    from rlmcost.placement import query as resolved
    from rlmcost.run.spec import Run

    def run(train: dict[str, Any]) -> Run:
        return Run.from_data({
            "algorithm": {"name": "grpo", "rule_reward": True},
            "models": {"actor": "qwen3-30b-a3b"},
            "workload": {"prompts": 16, "samples_per_prompt": 4},
            "deployment": {"framework": "nemo-rl", "forward": {"micro_batch": 2},
                           "train": {"tp": 2, "ep": 8, "zero": "1", **train}},
            "cluster": {"hardware": "h100-sxm", "gpus": 16},
        })  # fmt: skip

    runs = [run({}), run({"moe_capacity_factor": 1.0}),
            run({"moe_capacity_factor": 1.0, "moe_pad_to_capacity": True}), run({})]
    resolved._QUERIES.clear()
    kept = evaluate_many(runs)
    with memo.plain():
        plain = [evaluate_deployment(r) for r in runs]
    assert not any(isinstance(e, SpecError) for e in kept)
    times = [e.iteration_time_s for e in kept]
    assert times == [p.iteration_time_s for p in plain]
    assert times[1] < times[0] == times[3]


def test_verl_and_slime_read_the_capacity_nemo_rl_does_not_hand_it_on() -> None:
    a = "actor_rollout_ref.actor"
    tf = f"+{a}.megatron.override_transformer_config"
    megatron = [f"{a}.strategy=megatron", f"{a}.megatron.expert_model_parallel_size=4"]
    verl = DATA / "verl_grpo.yaml"
    q = import_verl(verl, [*megatron, f"{tf}.moe_expert_capacity_factor=1.0",
                           f"{tf}.moe_pad_expert_input_to_capacity=true"])  # fmt: skip
    flags = dict(q.flags)
    assert flags["--moe-capacity-factor"] == 1.0 and "--moe-pad-to-capacity" in flags
    assert not [k for k in q.ignored if "capacity" in k]
    # a negative factor is Megatron-core's dropless
    q = import_verl(verl, [*megatron, f"{tf}.moe_expert_capacity_factor=-1"])
    assert "--moe-capacity-factor" not in dict(q.flags)
    with pytest.raises(SpecError, match="needs"):
        import_verl(verl, [*megatron, f"{tf}.moe_pad_expert_input_to_capacity=true"])
    with pytest.raises(SpecError, match="DeepEP"):
        import_verl(verl, [*megatron, f"{tf}.moe_token_dispatcher_type=flex",
                           f"{tf}.moe_enable_deepep=True", f"{tf}.moe_expert_capacity_factor=1",
                           f"{tf}.moe_pad_expert_input_to_capacity=true"])  # fmt: skip
    # slime: Megatron-LM's flags on the launch line (scripts/models/qwen3-30B-A3B.sh + two)
    lines = [ln for ln in (DATA / "slime_qwen3-30B-A3B.args").read_text().splitlines()
             if ln and not ln.startswith("#")]  # fmt: skip
    argv = shlex.split(" ".join(lines))
    q = import_slime([*argv, "--moe-expert-capacity-factor", "1.25"])
    assert dict(q.flags)["--moe-capacity-factor"] == 1.25
    assert "--moe-capacity-factor" not in dict(import_slime(argv).flags)
    # NeMo RL: read, stated, not set (setup.py copies no capacity key into the model config)
    c = "+policy.megatron_cfg"
    q = import_qwen3_moe(1, f"{c}.moe_expert_capacity_factor=1.0")
    assert "--moe-capacity-factor" not in dict(q.flags)
    assert any("does not hand it to Megatron-core" in n for n in q.notes)
    # ... but main 7ea279ab merges model_overrides onto the provider: applied
    q = import_qwen3_moe(1, f"{c}.model_overrides.moe_expert_capacity_factor=1.5",
                         f"{c}.model_overrides.moe_pad_expert_input_to_capacity=true")
    flags = dict(q.flags)
    assert flags["--moe-capacity-factor"] == 1.5 and "--moe-pad-to-capacity" in flags
    with pytest.raises(SpecError, match="conflicts"):
        import_qwen3_moe(1, f"{c}.model_overrides.moe_expert_capacity_factor=1.5",
                         f"{c}.moe_expert_capacity_factor=1.0")


def test_a_groups_own_layout_keeps_the_runs_capacity_unless_it_gives_one() -> None:
    """A group's own trainer layout that gives only degrees keeps the deployment's capacity
    factor (the trained model's Megatron config, deployment.given.layered), as it keeps
    the deployment's token budget and dispatcher; one that gives the field has its own (the
    update's seconds; before, a group's layout that gave degrees alone trained dropless)."""
    from rlmcost.evaluation.deployment import evaluate_deployment
    from rlmcost.run.spec import Run

    def run(run_wide: dict[str, Any], own: dict[str, Any], kind: str = "train") -> float:
        r = Run.from_data({
            "algorithm": {"name": "grpo", "rule_reward": True},
            "models": {"actor": "qwen3-30b-a3b"},
            "workload": {"prompts": 64, "samples_per_prompt": 16, "prompt_len": 1024,
                         "response_len": 4096},
            "deployment": {"framework": "nemo-rl",
                           "train": {"tp": 2, "ep": 8, "zero": "1", **run_wide},
                           "groups": [{"members": "rollout", "gpus": 16},
                                      {"members": "actor+reference", "gpus": 16,
                                       "train": {"tp": 2, "ep": 8, "zero": "1", **own}}]},
            "cluster": {"hardware": "h100-sxm", "gpus": 32},
        })  # fmt: skip
        e = evaluate_deployment(r)
        group = next(g for g in e.groups if g.name.startswith("actor"))
        return next(j.predicted_s for j in group.jobs if str(j.task.kind) == kind)

    capped = run({"moe_capacity_factor": 1.0}, {"moe_capacity_factor": 1.0})
    assert run({"moe_capacity_factor": 1.0}, {}) == capped  # kept from the run
    assert run({}, {}) > capped  # dropless (the 1.30 imbalance) is slower
    assert run({}, {"moe_capacity_factor": 1.0}) == capped  # the group's own
    # its forwards run on the trainer's workers (Megatron applies the capacity in forward-only
    # passes too): the group's trainer layout gives their capacity where no forward layout does
    fwd = run({"moe_capacity_factor": 1.0}, {}, "forward")
    assert run({}, {"moe_capacity_factor": 1.0}, "forward") == fwd < run({}, {}, "forward")


def _pass_context(layout: Layout, options: Any) -> Any:
    from rlmcost.parallel.breakdown import DataShare
    from rlmcost.perf.efficiency import Device
    from rlmcost.perf.step_pass import StepContext
    from rlmcost.specs import get_hardware, get_model
    from rlmcost.specs.workload import Workload

    arch = get_model("qwen3-30b-a3b").arch()
    share = DataShare(sequences=1, micro_batch=1, micro_batches=1, tokens_per_sequence=4096)
    return StepContext.of(arch, layout, 4096, share, Device(get_hardware("h100-sxm")), options,
                          Workload())  # fmt: skip


@pytest.mark.parametrize("fused", [True, False])
def test_the_permutation_moves_the_kept_or_padded_copies(fused: bool) -> None:
    # Megatron-core hands permute num_out_tokens = capacity x num_experts when padded and the
    # kept copies when dropping (MoEAlltoAllTokenDispatcher.preprocess @d98e8a64dd): Qwen3-30B-A3B,
    # 4096 tokens, EP 8: 32,768 copies; padded to CF 2.0: capacity ceil(4096 x 8 / 128 x 2) = 512
    # x 128 = 65,536; CF 0.5 keeps 128 x 128 = 16,384; CF 1.0 drops none under even routing
    from rlmcost.perf.moe_ffn import permuted_rows
    from rlmcost.perf.moe_permute import unfused_permute_s
    from rlmcost.perf.step_pass import StepOptions

    base, opt = Layout(dp=8, ep=8), StepOptions(moe_layer_host_s=0.0, moe_permute_fusion=fused)
    rows = {cf: permuted_rows(_pass_context(base.with_(moe_capacity_factor=cf,
                                                       moe_pad_to_capacity=pad), opt))
            for cf, pad in ((None, False), (1.0, False), (0.5, False), (2.0, True))}  # fmt: skip
    assert rows == {None: 32_768, 1.0: 32_768, 0.5: 16_384, 2.0: 65_536}
    assert all(type(r) is int for r in rows.values())
    # one MoE layer's forward memory-bound kernels, padded to CF 2.0 against dropless: the
    # experts' activation (3 x 768 B-elements per row, d_expert 768, SwiGLU) and the fused
    # permute pair (2 x 2 x rows x d x 2 B) both double their rows; unfused, the atomic adds too
    from rlmcost.perf.step_pass import _layer

    c0 = _pass_context(base, opt)
    c2 = _pass_context(base.with_(moe_capacity_factor=2.0, moe_pad_to_capacity=True), opt)
    dev, x, d, more = c0.device, 2, 2048, 65_536 - 32_768
    grown = more * 3 * 768 * x + 2 * 2 * more * d * x
    unf = [unfused_permute_s(c, True)[0] for c in (c0, c2)]
    assert (unf[1] > unf[0]) is not fused  # the atomic adds over the padded copies
    # the all-to-all dispatcher's sort by local expert (16 local experts) over the received
    # rows, padded too (perf.moe_sort_chunks: the transposed [EP, local, capacity] block)
    from rlmcost.perf.moe_sort_chunks import local_sort_s

    sort = [local_sort_s(c, True, r)[0] for c, r in ((c0, 32_768), (c2, 65_536))]
    assert sort[1] > sort[0] > 0
    got = _layer(c2, True).fwd["elementwise"] - _layer(c0, True).fwd["elementwise"]
    expected = dev.memory_s(grown) + unf[1] - unf[0] + sort[1] - sort[0]
    assert got == pytest.approx(expected, rel=1e-9)


def test_train_says_what_the_moe_flags_do_on_a_moe_and_a_dense_model() -> None:
    # the MoE flags on rlmcost train: the unfused permutation is stated where it is priced (it
    # moved the step with no note before), and on a dense model both flags are said to do
    # nothing (they were silently ignored); the dense step is the flags-free one
    runner = CliRunner()
    base = ["train", "--gpus", "16", "--seq", "4096", "--batch", "64", "--zero", "1", "--json"]
    flags = ["--moe-capacity-factor", "1.25", "--no-moe-permute-fusion"]
    moe = runner.invoke(app, [*base, "-m", "qwen3-30b-a3b", "--ep", "8", *flags])
    assert moe.exit_code == 0, moe.output
    notes = " ".join(json.loads(moe.stdout)["notes"])
    assert "MoE permutation unfused" in notes
    dense = runner.invoke(app, [*base, "-m", "llama-3.1-8b", *flags])
    plain = runner.invoke(app, [*base, "-m", "llama-3.1-8b"])
    assert dense.exit_code == 0 and plain.exit_code == 0, dense.output
    d, p = json.loads(dense.stdout), json.loads(plain.stdout)
    text = " ".join(d["notes"])
    assert "llama-3.1-8b is dense, no effect" in text
    assert "is dense, no MoE permutation" in text
    assert d["step_time_s"] == p["step_time_s"]


def test_rl_commands_say_the_moe_fields_do_nothing_on_a_dense_model() -> None:
    # grpo on a dense actor with the MoE flags: before, the notes claimed a capacity factor
    # capping the busiest EP rank and an unfused permutation, neither priced (no routed experts)
    runner = CliRunner()
    base = ["grpo", "-m", "llama-3.1-8b", "--gpus", "16", "--zero", "1", "--json"]
    dense = runner.invoke(app, [*base, "--moe-capacity-factor", "1.25",
                                "--no-moe-permute-fusion"])  # fmt: skip
    plain = runner.invoke(app, base)
    assert dense.exit_code == 0 and plain.exit_code == 0, dense.output
    d, p = json.loads(dense.stdout), json.loads(plain.stdout)
    notes = " ".join(d["notes"])
    assert "given on dense models: no routed experts, no effect" in notes
    assert "MoE capacity factor 1.25" not in notes and "MoE permutation unfused" not in notes
    assert d["iteration"]["time_s"] == p["iteration"]["time_s"]


@settings(max_examples=25, deadline=None)
@given(ep=st.sampled_from([1, 2, 8]), tp=st.sampled_from([1, 2]), mb=st.sampled_from([1, 4]),
       low=st.sampled_from([0.3, 0.8, 1.0]), high=st.sampled_from([1.0, 1.25, 2.0]),
       fused=st.booleans(), imb=st.sampled_from([1.0, 1.3]))  # fmt: skip
def test_random_capacities_stay_ordered_and_above_the_roofline(
    ep: int, tp: int, mb: int, low: float, high: float, fused: bool, imb: float
) -> None:
    # Qwen3-30B-A3B on 16 H100s at 2,048 tokens: a lower factor (dropping) never costs more,
    # a higher padded factor never less, padding never less than dropping at the same factor;
    # every step is at least its FLOPs at peak (StepTime.roofline_bound_s); counts exact ints
    from rlmcost.perf.moe_ffn import permuted_rows
    from rlmcost.perf.step_pass import StepOptions
    from rlmcost.perf.train_step import train_step_time
    from rlmcost.specs import get_hardware, get_model

    arch, hw = get_model("qwen3-30b-a3b").arch(), get_hardware("h100-sxm")
    opt = StepOptions(moe_permute_fusion=fused, moe_rank_imbalance=imb, moe_layer_host_s=0.0)
    base = Layout(dp=16 // tp, tp=tp, sp=tp > 1, ep=ep, micro_batch=mb)

    def step(cf: float | None, pad: bool = False) -> Any:
        lay = base.with_(moe_capacity_factor=cf, moe_pad_to_capacity=pad)
        assert type(permuted_rows(_pass_context(lay, opt))) is int
        return train_step_time(arch, lay, 64, 2048, hw, options=opt)

    runs = [step(None), step(low), step(high), step(low, True), step(high, True)]
    for r in runs:
        assert r.step_s >= r.roofline_bound_s
        assert type(r.model_flops) is int and type(r.hardware_flops) is int
    dropless, drop_low, drop_high, pad_low, pad_high = (r.step_s for r in runs)
    assert drop_low <= drop_high <= dropless * (1 + 1e-12)
    assert pad_low <= pad_high and drop_low <= pad_low and drop_high <= pad_high


@pytest.mark.parametrize("key", ["moe_pad_expert_input_to_capacity=true",
                                 "moe_expert_capacity_factor=0"])  # fmt: skip
def test_nemo_rls_unread_keys_are_noted_not_checked(key: str) -> None:
    # review3: NeMo RL's first-level keys never reach Megatron-core (setup.py copies named keys,
    # not these: module rlmcost.frameworks.moe_capacity), yet Megatron-core's rules refused
    # them (padding without a factor, a factor of 0); NeMo RL trains dropless there
    q = import_qwen3_moe(1, f"+policy.megatron_cfg.{key}")
    flags = dict(q.flags)
    assert "--moe-capacity-factor" not in flags and "--moe-pad-to-capacity" not in flags
    assert any("does not hand it to Megatron-core" in n for n in q.notes)
    assert not [k for k in q.ignored if "capacity" in k]
