"""Megatron-core's uneven pipeline split (rlmcost/parallel/pipeline_split.py): layers per rank
against hand cases worked from Megatron-core's ``get_num_layers_to_build``
(megatron/core/transformer/transformer_block.py) and the checks of ``TransformerConfig.
__post_init__`` (transformer_config.py), NVIDIA/Megatron-LM @d98e8a64dd; the stages the
memory and time models read; the flags through a Run and back; the importers."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout, PipelineSchedule
from rlmcost.parallel.memory import memory_per_stage
from rlmcost.parallel.pipeline_split import stage_layer_counts
from rlmcost.parallel.shard import stages
from rlmcost.parallel.validate import check_layout
from rlmcost.specs.registry import get_model

QWEN = get_model("qwen3-235b-a22b").arch()  # 94 layers
DSV3 = get_model("deepseek-v3").arch()  # 61 layers, the first 3 dense
SLOTS = {"pp_embedding_slot": True, "pp_loss_slot": True}
runner = CliRunner()


def _interleaved(pp: int, v: int, **split: object) -> Layout:
    return Layout(pp=pp, schedule=PipelineSchedule.INTERLEAVED, virtual_stages=v, **split)


@pytest.mark.parametrize(
    ("n_layers", "layout", "want"),
    [
        # account_for both: (94 + 2) / 8 = 12 per rank, first and last rank one fewer
        (94, Layout(pp=8, **SLOTS), [11] + [12] * 6 + [11]),
        # ModelZoo PP 32 VPP 3: 96 / 32 = 3 per rank (chunks of 1: rank 0's first chunk and
        # the last rank's last chunk build no layer)
        (94, _interleaved(32, 3, **SLOTS), [2] + [3] * 30 + [2]),
        # the embedding alone: (95 + 1) / 8 = 12; the last rank keeps 12
        (95, Layout(pp=8, pp_embedding_slot=True), [11] + [12] * 7),
        # the loss alone at pp 1: the one rank builds every layer
        (7, Layout(pp=1, pp_loss_slot=True), [7]),
        # NeMo RL grpo-dapomath17k-dsv3-megatron.yaml: PP 8, first 7, last 6: (61 - 13) / 6 = 8
        (61, Layout(pp=8, pp_first_layers=7, pp_last_layers=6), [7] + [8] * 6 + [6]),
        # slime run-deepseek-r1.sh: PP 4, last 13: (61 - 13) / 3 = 16
        (61, Layout(pp=4, pp_last_layers=13), [16, 16, 16, 13]),
        # pp 2 with both ends given: no middle rank
        (10, Layout(pp=2, pp_first_layers=4, pp_last_layers=6), [4, 6]),
        # none set: rlmcost's own split, the first L mod P_p ranks one more
        (94, Layout(pp=8), [12] * 6 + [11] * 2),
    ],
)
def test_layers_per_rank_follow_megatron(n_layers, layout, want):
    assert stage_layer_counts(n_layers, layout) == want
    assert sum(want) == n_layers


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        # 94 + 1 = 95 slots over 8 ranks (transformer_config.py: must be divisible)
        (Layout(pp=8, pp_embedding_slot=True), "95 must be divisible by pp\\*v = 8\\*1"),
        # 96 slots over 8 x 5 chunks (num_layers_per_pipeline_rank % vp_size)
        (_interleaved(8, 5, **SLOTS), "96 must be divisible by pp\\*v = 8\\*5"),
        # the two kinds exclude each other (ValueError in transformer_config.py)
        (Layout(pp=8, pp_first_layers=11, pp_embedding_slot=True), "exclude each other"),
        # (94 - 10) / 7 = 12: whole, but the first rank's 10 does not split into 4 chunks
        (_interleaved(8, 4, pp_first_layers=10), "pp_first_layers=10 must be a positive"),
        # (94 - 11 - 11) / 6 = 12 but (94 - 10 - 11) = 73 does not divide by 6
        (Layout(pp=8, pp_first_layers=10, pp_last_layers=11), "leave 73 for 6 middle"),
        (Layout(pp=1, pp_first_layers=10), "need pp >= 2"),
    ],
)
def test_splits_megatron_refuses_are_one_line_errors(layout, message):
    with pytest.raises(SpecError, match=message):
        check_layout(QWEN, layout)


def test_megatron_split_makes_vpp_expressible():
    # 94 layers do not interleave over PP 8 x VPP 4 in rlmcost's own split; with the slots
    # they do, as the ModelZoo and Megatron-Bridge recipes run
    with pytest.raises(SpecError, match="interleaving needs layers=94"):
        check_layout(QWEN, _interleaved(8, 4))
    (note,) = check_layout(QWEN, _interleaved(8, 4, **SLOTS))  # the split, stated
    assert "[11, 12, 12, 12, 12, 12, 12, 11] layers per rank" in note


def test_stages_hold_the_embedding_and_head_where_megatron_does():
    # DeepSeek-V3: 3 dense layers first; PP 8, first 7, last 6
    st = stages(DSV3, Layout(pp=8, pp_first_layers=7, pp_last_layers=6))
    assert [(s.dense_layers, s.moe_layers) for s in st[:2]] == [(3, 4), (0, 8)]
    assert st[0].first and st[-1].last and st[-1].layers == 6
    # one layer fewer on the first rank: its memory falls by exactly one MoE layer's states
    even = memory_per_stage(QWEN, Layout(pp=8, ep=8, dp=8), "train", 64, 4096)
    slot = memory_per_stage(QWEN, Layout(pp=8, ep=8, dp=8, **SLOTS), "train", 64, 4096)
    assert slot[0].weights < even[0].weights and slot[1].weights == even[1].weights
    assert slot[-1].weights == even[-1].weights  # 11 layers + head in both


def test_flags_round_trip_through_a_run():
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.run.command import to_command

    base = ["--framework", "none", "--model", "qwen3-235b-a22b", "--gpus", "128", "--tp", "2",
            "--pp", "8", "--ep", "16", "--etp", "1", "--zero", "1"]  # fmt: skip
    for split in (["--pp-first-layers", "11", "--pp-last-layers", "11"],
                  ["--pp-embedding-slot", "--pp-loss-slot"]):  # fmt: skip
        run = run_from_argv("grpo", base + split)
        assert run.deployment.train.pp_split is not None
        layout = run.deployment.train.layout(8)
        assert stage_layer_counts(94, layout) == [11] + [12] * 6 + [11]
        words = to_command(run)
        assert " ".join(split) in words
        again = run_from_argv("grpo", words.split()[2:])  # "rlmcost grpo ..."
        assert again.deployment == run.deployment
    plain = run_from_argv("grpo", base)
    assert plain.deployment.train.pp_split is None and "--pp-" not in to_command(plain)


def test_cli_rejects_a_bad_split_in_one_line():
    result = runner.invoke(app, ["train", "--model", "qwen3-235b-a22b", "--pp", "8", "--ep",
                                 "8", "--gpus", "64", "--pp-embedding-slot"])  # fmt: skip
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "95 must be divisible" in result.output


def test_nemo_rl_import_reads_the_first_and_last_stage_layers():
    from pathlib import Path

    from rlmcost.frameworks.nemo_rl import import_nemo_rl

    cfg = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"
    keys = ["policy.dtensor_cfg.enabled=false", "policy.megatron_cfg.enabled=true",
            "policy.megatron_cfg.pipeline_model_parallel_size=4",
            "policy.megatron_cfg.num_layers_in_first_pipeline_stage=3",
            "policy.megatron_cfg.num_layers_in_last_pipeline_stage=5"]  # fmt: skip
    flags = dict(import_nemo_rl(cfg, keys).flags)
    assert (flags["--pp-first-layers"], flags["--pp-last-layers"]) == (3, 5)
    # at PP 1 the keys change nothing and set no flag
    flags = dict(import_nemo_rl(cfg, keys[:2] + keys[3:]).flags)
    assert "--pp-first-layers" not in flags
