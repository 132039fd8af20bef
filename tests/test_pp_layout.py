"""Megatron-core's --pipeline-model-parallel-layout (rlmcost/parallel/pp_layout.py): strings
against Megatron-core's own expansions (NVIDIA/Megatron-LM @d98e8a64dd,
megatron/core/transformer/pipeline_parallel_layer_layout.py ``parse_str_to_list`` docstring,
``get_layer_offset``; docs/user-guide/features/pipeline_parallel_layout.md's rank map) and
Megatron-Bridge's DeepSeek-V3 recipe (recipes/deepseek/deepseek_v3.py layout_map @7e8111c23);
its errors; the flag through a Run and back; the importers' keys; exact = compiled stages."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rlmcost.perf
from rlmcost.cli import app
from rlmcost.compiled.arch import arch_numbers
from rlmcost.compiled.memory import stage_layers
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout, PipelineSchedule
from rlmcost.parallel.pipeline_split import stage_layer_counts
from rlmcost.parallel.pp_layout import expand, layout_problem, layout_text, parse
from rlmcost.parallel.shard import stages
from rlmcost.parallel.validate import check_layout
from rlmcost.specs.registry import get_model

DSV3 = get_model("deepseek-v3").arch()  # 61 layers, the first 3 dense
BRIDGE_PP4_VP4 = "Et*4|(t*4|)*14tL"  # deepseek_v3.py layout_map[(4, 4)] without MTP
DOC = "Et*3|(tt|)*29,m|L"  # the docs' DeepSeek-V3 example, PP 16 x VPP 2
runner = CliRunner()
DATA = Path(__file__).parent / "data" / "frameworks"


def _lay(pp: int, text: str, v: int = 1, **kw: object) -> Layout:
    sched = PipelineSchedule.INTERLEAVED if v > 1 else PipelineSchedule.ONE_F_ONE_B
    return Layout(pp=pp, virtual_stages=v, schedule=sched, pp_layout=text, **kw)


def test_expansion_matches_megatrons_docstring():
    # parse_str_to_list: "Ettt|(tt|)*29,m|L" -> [[E,t,t,t]] + [[t,t]]*29 + [[m],[L]]
    assert expand("Ettt|(tt|)*29,m|L") == ["Ettt"] + ["tt"] * 29 + ["m", "L"]
    # the code's regex comments: xy(ab|cd|ef)*2,pq and (|ab)*2,cd; x*n unrolls one character
    assert expand("tt(t|tt|t)*2,t") == ["ttt", "tt", "tt", "tt", "tt"]  # xyab|cd|efab|cd|efpq
    assert expand("(|t)*2,tt") == ["", "t", "ttt"]
    assert expand("E||t|L") == ["E", "", "t", "L"]  # empty stages are allowed (docs)


def test_docs_rank_map_pp16_vpp2():
    # pipeline_parallel_layout.md: rank 0 = embedding + 3 | 2; ranks 1-13 = 2 | 2;
    # rank 14 = 2 | mtp; rank 15 = 2 | loss
    lay = parse(DOC, 16)
    assert lay.virtual_stages == 2
    assert lay.chunk_layers() == [[3, 2]] + [[2, 2]] * 13 + [[2, 0], [2, 0]]
    assert lay.positions("m") == [(14, 1)] and lay.positions("L") == [(15, 1)]
    assert lay.positions("E") == [(0, 0)]
    # get_layer_offset: rank 0's second chunk starts after every rank's first (3 + 15 x 2)
    assert lay.layer_ids()[0] == [0, 1, 2, 33, 34]
    assert lay.layer_ids()[13] == [27, 28, 59, 60] and lay.layer_ids()[15] == [31, 32]
    assert layout_problem(DOC, 16, 61, 2) is None


def test_megatron_bridge_list_form_and_rank_counts():
    recipe = [["embedding"] + ["decoder"] * 4] + [["decoder"] * 4] * 14 + [["decoder", "loss"]]
    text = layout_text(recipe)
    assert expand(text) == expand(BRIDGE_PP4_VP4)
    # virtual stage i on rank i mod 4: rank 3 holds stages 3, 7, 11, 15 = 4 + 4 + 4 + 1
    assert stage_layer_counts(61, _lay(4, BRIDGE_PP4_VP4, 4)) == [16, 16, 16, 13]
    (note,) = check_layout(DSV3, _lay(4, BRIDGE_PP4_VP4, 4))
    assert "[16, 16, 16, 13] layers per rank" in note and "[4, 4, 4, 1]" in note
    # the validate row runs the layout of the run the page printed instead (NVIDIA-NeMo/
    # Megatron-Bridge gaod/r0.2.0_test @4a82e1651, deepseek_llm_pretrain.py
    # deepseek_v3_gb200_config): the 3 dense layers alone in the first chunk, interleaved over
    # its 4 virtual stages; the busiest rank holds 16 layers under both
    rows = json.loads((Path(rlmcost.perf.__file__).parent / "data" / "published.json").read_text())
    (row,) = [r for r in rows["rows"] if r["id"] == "megatron-bridge-25.11-gb200-deepseek-v3-bf16"]
    lay = row["layout"]
    assert lay["pp_layout"] == "Et*3|(t*4|)*14ttL" and (lay["pp"], lay["virtual_stages"]) == (4, 4)
    assert lay["schedule"] == "interleaved"
    run = _lay(4, lay["pp_layout"], 4)
    assert stage_layer_counts(61, run) == [15, 16, 16, 14]
    assert max(stage_layer_counts(61, run)) == max(stage_layer_counts(61, _lay(4, text, 4)))


@pytest.mark.parametrize(
    ("text", "pp", "v", "ranks", "mtp_at"),
    [
        # Megatron-MoE-ModelZoo @e865051 best_practice/deepseek-v3/run_deepseek_v3_gb200.sh
        # (PP 4, VPP 4): the Bridge layout with the MTP layer before the loss
        ("Et*4|(tttt|)*14tmL", 4, 4, [16, 16, 16, 13], [(3, 3)]),
        # run_deepseek_v3_h100.sh (PP 8, VPP 4): 1 + 30 x 2 layers, m with the loss
        ("Et|(tt|)*30mL", 8, 4, [7] + [8] * 6 + [6], [(7, 3)]),
        # run_deepseek_v3_h100.sh's long-context rows (PP 8, VPP 4): stage 23 holds one layer
        ("Et*2|(tt|)*22t|(tt|)*7mL", 8, 4, [8] * 7 + [5], [(7, 3)]),
        # best_practice/kimi-k2/run_kimi_k2_gb200_128k_G128.sh (PP 2, so VPP 16)
        ("Et|t|(tt|)*29tL", 2, 16, [31, 30], []),
    ],
)
def test_modelzoo_layouts(text: str, pp: int, v: int, ranks: list[int], mtp_at: list):
    assert layout_problem(text, pp, 61, v) is None  # DeepSeek-V3 and Kimi-K2: 61 layers
    lay = parse(text, pp)
    assert lay.rank_layers() == ranks and lay.positions("m") == mtp_at


@pytest.mark.parametrize(
    ("text", "pp", "v", "message"),
    [
        ("Et*4|(t*4|)*14tx", 4, 4, "invalid layer character 'x'"),
        ("Et*4|(t*4|)*13tL", 4, 4, "has 15 stages, not a multiple of pp=4"),
        (BRIDGE_PP4_VP4, 4, 1, "pp 4 x 4 virtual stages, not 1"),
        ("tE" + BRIDGE_PP4_VP4[2:], 4, 4, "embedding E must be the first"),
        ("E" + BRIDGE_PP4_VP4, 4, 4, "embedding E must be the first layer, exactly once"),
        ("Et*4|(t*4|)*14t", 4, 4, "the loss L must be the last"),
        ("Et*4|(t*4|)*14ttL", 4, 4, "places 62 transformer layers"),
        ("Et*4|(t*4|)*14mtL", 4, 4, "must come before the MTP layers"),
        ("Et*30|t*31m||L", 2, 2, "one rank's last virtual stage"),  # m on rank 1's first
        ("((t)*2)*2", 1, 1, "invalid layer character '('"),  # parentheses do not nest
        ("t*99999999", 1, 1, "unrolls past"),
    ],
)
def test_bad_strings_give_megatrons_reason(text: str, pp: int, v: int, message: str):
    problem = layout_problem(text, pp, 61, v)
    assert problem is not None and message in problem and "\n" not in problem


def test_layout_excludes_the_other_split_options():
    with pytest.raises(SpecError, match="--pp-layout excludes"):
        check_layout(DSV3, _lay(4, BRIDGE_PP4_VP4, 4, pp_embedding_slot=True))


def test_dense_layers_follow_megatrons_layer_ids():
    # PP 2 x VP 2: ids 0 | 1 | 2..31 | 32..60; the 3 dense ids 0, 1, 2 land 2 on rank 0 and
    # 1 on rank 1 (a run of consecutive layers per rank would put all 3 on rank 0)
    layout = _lay(2, "Et|t|t*30|t*29L", 2)
    want = [(2, 29), (1, 29)]
    assert [(s.dense_layers, s.moe_layers) for s in stages(DSV3, layout)] == want
    assert stage_layers(arch_numbers(DSV3), layout) == want  # the compiled path agrees


def test_flag_round_trips_through_a_run_with_its_schedule():
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.run.command import to_command

    base = ["--framework", "none", "--model", "deepseek-v3", "--gpus", "256", "--pp", "4",
            "--ep", "64", "--etp", "1", "--zero", "1"]  # fmt: skip
    run = run_from_argv("grpo", [*base, "--pp-layout", BRIDGE_PP4_VP4])
    t = run.deployment.train
    assert (t.schedule, t.virtual_stages) == (PipelineSchedule.INTERLEAVED, 4)
    assert t.pp_split is not None and t.pp_split.layout == BRIDGE_PP4_VP4
    assert stage_layer_counts(61, t.layout(64)) == [16, 16, 16, 13]
    words = to_command(run)
    assert f"--pp-layout '{BRIDGE_PP4_VP4}'" in words
    again = run_from_argv("grpo", shlex.split(words)[2:])  # "rlmcost grpo ..."
    assert again.deployment == run.deployment


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--pp-layout", "Et*4|(t*4|)*14tx"], "invalid layer character 'x'"),
        (["--pp-layout", "Et*4|(t*4|)*14t"], "the loss L must be the last"),
        (["--pp-layout", BRIDGE_PP4_VP4, "--pp-loss-slot"], "--pp-layout excludes"),
    ],
)
def test_cli_rejects_a_bad_layout_in_one_line(extra: list[str], message: str):
    result = runner.invoke(app, ["train", "--model", "deepseek-v3", "--pp", "4", "--ep", "64",
                                 "--etp", "1", "--gpus", "256", *extra])  # fmt: skip
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert message in " ".join(result.output.split())


def test_train_command_runs_the_layout_interleaved():
    result = runner.invoke(app, ["train", "--model", "deepseek-v3", "--pp", "4", "--ep", "64",
                                 "--etp", "1", "--gpus", "256", "--zero", "1", "--json",
                                 "--pp-layout", BRIDGE_PP4_VP4])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "[16, 16, 16, 13] layers per rank" in result.output


def _nemo_rl(keys: list[str]) -> dict:
    from rlmcost.frameworks.nemo_rl import import_nemo_rl

    cfg = DATA / "nemo_rl_grpo_math.yaml"
    base = ["policy.dtensor_cfg.enabled=false", "policy.megatron_cfg.enabled=true",
            "policy.megatron_cfg.pipeline_model_parallel_size=2"]  # fmt: skip
    q = import_nemo_rl(cfg, base + keys)
    return {"flags": dict(q.flags), "notes": " ".join(q.notes)}


def test_importers_read_the_layout_keys():
    from rlmcost.frameworks.slime import import_slime
    from rlmcost.frameworks.verl import import_verl

    text = "Et*9|t*9|t*9|t*9L"  # 36 layers over PP 2 x VP 2
    # NeMo RL: model_overrides reaches the Megatron-Bridge provider (setup.py @7ea279ab)
    got = _nemo_rl([f"policy.megatron_cfg.model_overrides.pipeline_model_parallel_layout={text}"])
    assert got["flags"]["--pp-layout"] == text
    # the first-class key is copied nowhere: no flag, a note
    got = _nemo_rl([f"policy.megatron_cfg.pipeline_model_parallel_layout={text}"])
    assert "--pp-layout" not in got["flags"] and "copies no such key" in got["notes"]
    # slime: Megatron-LM's argument, Qwen3-4B's script at PP 2
    lines = [ln for ln in (DATA / "slime_qwen3-4B.args").read_text().splitlines()
             if ln and not ln.startswith("#")]  # fmt: skip
    argv = shlex.split(" ".join(lines).replace("--pipeline-model-parallel-size 1",
                                               "--pipeline-model-parallel-size 2"))
    q = import_slime([*argv, "--pipeline-model-parallel-layout", text])
    assert dict(q.flags)["--pp-layout"] == text
    # verl: override_transformer_config goes to TransformerConfig (config_converter.py:94)
    a = "actor_rollout_ref.actor"
    tf = f"+{a}.megatron.override_transformer_config"
    q = import_verl(DATA / "verl_grpo.yaml", [f"{a}.strategy=megatron",
                                             f"{a}.megatron.pipeline_model_parallel_size=2",
                                             f"{tf}.pipeline_model_parallel_layout={text}",
                                             f"{tf}.num_layers_in_first_pipeline_stage=5"])
    assert dict(q.flags)["--pp-layout"] == text and dict(q.flags)["--pp-first-layers"] == 5


def test_importers_take_megatrons_list_form_and_refuse_a_bad_one():
    # Megatron-Bridge recipes set the layout as lists of layer names (deepseek_v3.py
    # layout_map); TransformerConfig accepts that form beside the string
    from rlmcost.frameworks.config import Reader, flatten
    from rlmcost.frameworks.megatron_split import set_split, transformer_config_keys
    from rlmcost.frameworks.result import ImportedQuery

    key = "cfg.pipeline_model_parallel_layout"
    stages_ = [["embedding", "decoder", "decoder"], ["decoder", "mtp", "loss"]]
    r = Reader(flatten({"cfg": {"pipeline_model_parallel_layout": stages_}}, "cfg"), "cfg")
    q = ImportedQuery("verl", "cfg")
    set_split(r, q, 2, transformer_config_keys("cfg."))
    assert dict(q.flags)["--pp-layout"] == "Ett|tmL"
    bad = Reader(flatten({"cfg": {"pipeline_model_parallel_layout": [["encoder"]]}}, "c"), "c")
    with pytest.raises(SpecError, match=f"'{key}'.*'encoder' is not a layer type"):
        set_split(bad, ImportedQuery("verl", "cfg"), 2, transformer_config_keys("cfg."))


def test_a_stage_of_no_layers_under_full_recompute_rebuilds_none():
    """A layout string whose first stage holds only the embedding ('E|...') under full
    recomputation: that stage rebuilds no layer (the symbolic and the compiled memory model
    raised on an empty max before; found by test_compiled_memory's hypothesis test)."""
    from rlmcost.compiled import memory as twin
    from rlmcost.parallel import memory as symbolic
    from rlmcost.parallel.layout import Checkpointing

    arch = get_model("llama-3.1-8b").arch()
    layout = Layout(pp=2, ckpt=Checkpointing.FULL, pp_layout="E|" + "t" * 32 + "L")
    got = twin.memory_per_rank(arch, layout, "train", 2, 1024)
    assert got == symbolic.memory_per_rank(arch, layout, "train", 2, 1024)
    res = CliRunner().invoke(app, ["train", "-m", "8b", "--gpus", "2", "--pp", "2", "--ckpt",
                                   "full", "--pp-layout", "E|" + "t" * 32 + "L"])  # fmt: skip
    assert res.exit_code == 0, res.output
