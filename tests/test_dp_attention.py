"""SGLang's data-parallel attention inside an engine (``--dp-attention``; SGLang
python/sglang/srt/layers/dp_attention.py ``compute_dp_attention_world_info``: attention TP =
tp_size // dp_size): the engine setting, its memory per GPU, its refusals and slime's import.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli.from_command import run_from_argv
from rlmcost.compiled.memory import memory_per_stage
from rlmcost.errors import SpecError
from rlmcost.frameworks.launch_scripts import import_slime_script
from rlmcost.frameworks.slime import import_slime
from rlmcost.parallel.breakdown import Mode
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.validate import check_layout
from rlmcost.specs import get_model

runner = CliRunner()


def test_memory_per_gpu_of_an_mla_engine_by_hand() -> None:
    # DeepSeek-V2-Lite's config.json (deepseek-ai/DeepSeek-V2-Lite): hidden 2048, 16 heads,
    # 27 layers, q_lora_rank null, kv_lora_rank 512, qk_nope 128 + qk_rope 64, v_head_dim 128.
    # Per layer, TP splits q_proj 2048 x 16 x 192, kv_b_proj 512 x 16 x (128 + 128) and o_proj
    # 16 x 128 x 2048; kv_a_proj_with_mqa and its norm stay whole (DeepseekV2Attention).
    arch = get_model("deepseek-v2-lite").arch()
    split = 2048 * 16 * 192 + 512 * 16 * 256 + 16 * 128 * 2048
    plain = memory_per_stage(arch, Layout(tp=4), Mode.GENERATE, 4, 4096)[0]
    dp = memory_per_stage(arch, Layout(tp=4, attention_dp=4), Mode.GENERATE, 4, 4096)[0]
    # DP attention 4 of tp 4: every GPU holds whole attention weights (bf16, 2 bytes)
    assert dp.weights - plain.weights == 27 * (split - split // 4) * 2 == 509_607_936
    # MLA's latent KV (512 + 64 per token and layer, bf16) is whole on every TP rank; under DP
    # attention a GPU holds its own rank's requests: 1 of the 4 sequences
    assert plain.kv_cache == 4 * 4096 * 27 * (512 + 64) * 2
    assert dp.kv_cache == plain.kv_cache // 4
    assert (dp.activations, dp.logits) == (plain.activations, plain.logits)


def test_heads_split_over_the_attention_ranks() -> None:
    glm = get_model("glm-4.7-flash").arch()  # 20 heads: tp 8 does not split them
    with pytest.raises(SpecError, match="tp=8 must divide heads=20"):
        check_layout(glm, Layout(tp=8), replicate_kv=True)
    check_layout(glm, Layout(tp=8, attention_dp=8), replicate_kv=True)  # attention tp 1
    with pytest.raises(SpecError, match=r"attention tp=8 \(tp 16 / data-parallel attention 2"):
        check_layout(glm, Layout(tp=16, attention_dp=2), replicate_kv=True)
    with pytest.raises(SpecError, match="positive divisor"):
        check_layout(glm, Layout(tp=8, attention_dp=3), replicate_kv=True)


@pytest.mark.parametrize(("argv", "message"), [
    (["--engine", "hf", "--rollout-tp", "2", "--dp-attention", "2"],
     "dp attention 2 with engine hf"),
    (["--engine", "sglang", "--rollout-tp", "2", "--dp-attention", "4"],
     "N must divide the engine's TP"),
])  # fmt: skip
def test_refused_in_one_line(argv: list[str], message: str) -> None:
    res = runner.invoke(app, ["ppo", "-m", "8b", *argv])
    assert res.exit_code != 0 and res.exception is None or isinstance(res.exception, SystemExit)
    assert message in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_glm_flash_engines_run_attention_data_parallel() -> None:
    # slime scripts/run-glm4.7-30B-A3B.sh @624b824a: engines of 8 GPUs, --sglang-dp-size 8, on
    # GLM-4.7-Flash's 20 heads; plain TP 8 was refused. On 16 GPUs (the script's trainer
    # layout, TP 2 x PP 2 x CP 2 x EP 8, needs 16: EP 8 x PP 2 over 8 GPUs is no Megatron grid)
    base = ["rlvr", "-m", "glm-4.7-flash", "--framework", "slime", "--gpus", "16",
            "--engine", "sglang", "--rollout-tp", "8", "--json"]  # fmt: skip
    res = runner.invoke(app, [*base, "--dp-attention", "1"])  # the preset's own: the script's 8
    assert res.exit_code != 0 and "tp=8 must divide heads=20" in res.output
    res = runner.invoke(app, [*base, "--dp-attention", "8"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["run"]["deployment"]["engine"]["dp_attention"] == 8


def _slots(dp: str) -> int:
    args = ["grpo", "-m", "gpt-2", "-B", "4096", "-K", "4", "-S", "128", "-T", "256", "--json",
            "--reward", "rule", "--groups", "rollout=2,actor+reference=1", "--engine", "sglang",
            "--rollout-tp", "2", "--dp-attention", dp]  # fmt: skip
    out = runner.invoke(app, args, env={"COLUMNS": "160"})
    assert out.exit_code == 0, out.output
    g = next(g for g in json.loads(out.stdout)["placement_detail"]["groups"]
             if g["name"] == "rollout")  # fmt: skip
    return int(g["jobs"][0]["rollout"]["slots_per_replica"])


def test_each_attention_rank_runs_sglangs_cap_of_its_own_pool() -> None:
    # SGLang managers/tp_worker.py: a scheduler runs min(pool // 2, its request pool) requests,
    # the request pool min(max(pool / context x 512, 2048), 4096) rows (model_runner.py
    # init_memory_pool); GPT-2's pool of millions of tokens on an H100 makes it the 4,096 rows.
    # Under DP attention every attention rank has its own scheduler: 2 x 4,096 per replica.
    assert _slots("1") == 4096
    assert _slots("2") == 2 * 4096


GLM = Path(__file__).parent / "data" / "frameworks" / "slime_glm4.7-30B-A3B" / "scripts"


def test_slimes_glm_flash_script_imports_with_dp_attention() -> None:
    # THUDM/slime scripts/run-glm4.7-30B-A3B.sh and scripts/models/glm4.7-30B-A3B.sh at
    # 624b824a, stored as they are: --rollout-num-gpus-per-engine 8, --sglang-enable-dp-attention
    # --sglang-dp-size 8, --sglang-enable-dp-lm-head
    q = import_slime_script(GLM / "run-glm4.7-30B-A3B.sh", [], [], None, None)
    f = dict(q.flags)
    assert (f["--engine"], f["--rollout-tp"], f["--dp-attention"]) == ("sglang", 8, 8)
    assert any("--sglang-enable-dp-lm-head" in n for n in q.notes)
    # the engine is no longer refused (tp=8 over 20 heads); its trainer is: Megatron-core's
    # expert grid needs ETP x EP x PP = 1 x 8 x 2 = 16 GPUs, the script gives one node of 8
    res = runner.invoke(app, ["import", "slime", str(GLM / "run-glm4.7-30B-A3B.sh")])
    assert res.exit_code != 0 and "heads=20" not in res.output
    assert "etp*ep = 1*8 must divide tp*cp*dp" in res.output
    # on 16 GPUs the imported query evaluates, its engines of 8 with 8 attention ranks
    argv = q.argv()
    argv[argv.index("--gpus") + 1] = "16"
    run = run_from_argv(q.algorithm, argv)
    assert run.deployment.engine.dp_attention == 8


def test_slimes_dp_size_needs_dp_attention() -> None:
    words = ["train.py", "--hf-checkpoint", "/root/Qwen3-4B", "--rollout-num-gpus-per-engine",
             "2", "--sglang-dp-size", "2", "--n-samples-per-prompt", "8",
             "--rollout-batch-size", "8", "--colocate"]  # fmt: skip
    with pytest.raises(SpecError, match="without --sglang-enable-dp-attention"):
        import_slime(words, None, None)
    q = import_slime([*words, "--sglang-enable-dp-attention"], None, None)
    assert dict(q.flags)["--dp-attention"] == 2


def test_the_reference_memory_form_refuses_dp_attention_instead_of_ignoring_it() -> None:
    # parallel.memory (the sympy-side reference the compiled twin is checked against) has no
    # attention-DP split: it must not answer as if the attention were plain TP
    from rlmcost.parallel.memory import memory_per_rank

    arch = get_model("deepseek-v2-lite").arch()
    with pytest.raises(SpecError, match="attention_dp=4: SGLang's data-parallel attention"):
        memory_per_rank(arch, Layout(tp=4, attention_dp=4), Mode.GENERATE, 4, 1024)
    plain = memory_per_rank(arch, Layout(tp=4), Mode.GENERATE, 4, 1024)
    assert plain.total == max(memory_per_stage(arch, Layout(tp=4), Mode.GENERATE, 4, 1024),
                              key=lambda b: b.total).total  # fmt: skip
