"""`rlmcost train`: output, --json, and one-line errors for bad layouts."""

import json

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.parallel.comm import group_is_intra_node
from rlmcost.parallel.layout import Layout

runner = CliRunner()

LAYOUT_405B = ["-m", "llama-3.1-405b", "--gpus", "128", "--tp", "8", "--pp", "8", "--sp"]


def run_json(*args: str) -> dict:
    result = runner.invoke(app, ["train", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_405b_layout_human_output():
    result = runner.invoke(app, ["train", *LAYOUT_405B, "--zero", "1", "--ckpt", "full"])
    assert result.exit_code == 0, result.output
    for word in ("weights", "optimizer", "activations", "fits", "all-gather", "bubble"):
        assert word in result.stdout


def test_405b_json_is_consistent():
    out = run_json(*LAYOUT_405B, "--zero", "1", "--ckpt", "full")
    assert out["layout"]["dp"] == 2  # inferred: 128 / (8 * 8)
    mem = out["memory_per_rank_bytes"]
    assert mem["total"] == sum(v for k, v in mem.items() if k != "total")
    assert out["fits"] == (mem["total"] <= out["hbm_bytes"])
    # 126 layers over 8 stages: the first stages hold 16 layers and the embedding
    assert out["memory_peak_stage"] == 0
    # ZeRO-1 over dp=2: optimizer = 12 bytes x half the stage's parameters, weights 2 bytes
    assert mem["optimizer"] == 3 * mem["weights"]
    assert out["work_global_flops"] >= 128 * out["work_per_rank_flops"] * 0.9
    assert out["bubble_fraction"] == pytest.approx(7 / 32)
    assert out["communication_bytes_per_rank"] == sum(
        c["bytes_per_rank"] for c in out["communication"]
    )
    links = {c["strategy"]: c["link"] for c in out["communication"]}
    assert links["sp"] == "intra-node" and links["dp"] == "inter-node"


def test_zero3_shrinks_model_states_and_adds_gather_buffer():
    base = run_json("-m", "llama-3.1-8b", "--gpus", "8")["memory_per_rank_bytes"]
    z3 = run_json("-m", "llama-3.1-8b", "--gpus", "8", "--zero", "3")["memory_per_rank_bytes"]
    assert z3["weights"] * 8 >= base["weights"] and z3["weights"] < base["weights"]
    assert z3["optimizer"] * 8 >= base["optimizer"] > z3["optimizer"]
    assert z3["buffers"] > 0 == base["buffers"]


def test_moe_with_expert_parallelism():
    out = run_json("-m", "mixtral-8x7b", "--gpus", "16", "--ep", "8", "--tp", "2", "--sp")
    kinds = {(c["strategy"], c["collective"]) for c in out["communication"]}
    assert ("ep", "all-to-all") in kinds
    # Megatron-core folds EP inside DP x TP (parallel_state.initialize_model_parallel): 16 GPUs
    # at TP 2 are 8 data ranks, over which the 8 EP ranks (expert TP = TP) are laid
    assert out["layout"]["dp"] == 8


def test_context_parallel_for_long_traces():
    one = run_json("-m", "llama-3.1-8b", "--seq", "32768")
    four = run_json("-m", "llama-3.1-8b", "--seq", "32768", "--cp", "4")
    assert four["memory_per_rank_bytes"]["activations"] * 4 == pytest.approx(
        one["memory_per_rank_bytes"]["activations"], rel=1e-6
    )
    assert any(c["strategy"] == "cp" for c in four["communication"])


@pytest.mark.parametrize(
    "args, words",
    [
        (["-m", "llama-3.1-70b", "--tp", "3"], ["tp=3", "heads=64", "kv heads=8", "try"]),
        (["-m", "llama-3.1-70b", "--gpus", "64", "--dp", "2", "--tp", "8"], ["--gpus", "try"]),
        (["-m", "llama-3.1-8b", "--ep", "2"], ["ep=2", "dense"]),
        (["-m", "mixtral-8x7b", "--ep", "3"], ["ep=3", "8 experts", "try"]),
        (["-m", "llama-3.1-8b", "--pp", "40"], ["pp=40", "32 layers"]),
        (["-m", "llama-3.1-8b", "--pp", "4", "--virtual-stages", "3"], ["interleaved"]),
        (["-m", "llama-3.1-8b", "--dp", "2", "--batch", "3"], ["batch=3", "try"]),
        (["-m", "llama-3.1-8b", "--cp", "3", "--seq", "1000"], ["seq=1000", "cp=3"]),
        (["-m", "no-such-model"], ["unknown model"]),
        (["-m", "llama-3.1-8b", "--hardware", "tpu-v9"], ["unknown hardware"]),
        (["-m", "llama-3.1-8b", "--gpus", "12"], ["gpus=12"]),
        (["-m", "llama-3.1-8b", "--gpus", "6", "--tp", "4"], ["a multiple of 4 GPUs", "--tp 1"]),
    ],
)
def test_bad_layouts_are_one_line_errors(args, words):
    result = runner.invoke(app, ["train", *args])
    assert result.exit_code == 2, result.output
    lines = [x for x in result.output.strip().splitlines() if x]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_rank_order_tp_innermost():
    # Megatron-LM rank order tp-cp-ep-dp-pp: TP 8 fills an 8-GPU node; DP spans nodes.
    lay = Layout(dp=4, tp=8, pp=2)
    assert group_is_intra_node(lay, ("tp",), 8)
    assert not group_is_intra_node(lay, ("dp",), 8)
    assert group_is_intra_node(Layout(dp=2, tp=4), ("dp",), 8)


def test_predicted_step_time_in_text_output():
    result = runner.invoke(app, ["train", *LAYOUT_405B, "--zero", "1", "--ckpt", "full"])
    assert result.exit_code == 0, result.output
    for word in ("step time", "TFLOP/s per GPU", "MFU", "pipeline bubble", "optimizer step",
                 "exposed comm: sp", "offload", "recomputation", "roofline bound"):  # fmt: skip
        assert word in result.stdout, word


def test_predicted_step_time_in_json_is_consistent():
    out = run_json(*LAYOUT_405B, "--zero", "1", "--ckpt", "full")
    # every key of before is kept; the prediction adds three
    for key in ("compute_time_at_peak_s", "communication_time_s", "bubble_fraction", "fits"):
        assert key in out
    st = out["step_time"]
    # tflops_per_gpu x GPUs x step = model FLOPs; MFU = that rate / the 989.4 TFLOP/s peak
    assert out["tflops_per_gpu"] * 1e12 * 128 * out["step_time_s"] == pytest.approx(
        st["model_flops"], rel=1e-9
    )
    assert out["mfu"] == pytest.approx(out["tflops_per_gpu"] * 1e12 / 989.4e12, rel=1e-9)
    parts = (
        sum(st["compute_s"].values()) + sum(st["exposed_communication_s"].values())
        + st["bubble_s"] + st["optimizer_s"] + st["offload_s"]
    )  # fmt: skip
    assert out["step_time_s"] == pytest.approx(parts, rel=1e-9)
    assert out["step_time_s"] >= st["roofline_bound_s"] >= out["compute_time_at_peak_s"] * 0.5
    # 1F1B: bubble = (p - 1)/m of the busy time (Narayanan et al. 2021 §2.2.1), p=8, m=32
    busy = parts - st["bubble_s"] - st["optimizer_s"] - st["exposed_communication_s"].get("dp", 0)
    assert st["bubble_s"] == pytest.approx(7 / 32 * busy, rel=1e-9)


def test_offload_uses_the_host_link():
    base = ["-m", "llama-3.1-8b", "--gpus", "8", "--zero", "3", "--offload-optimizer"]
    one = run_json(*base, "--host-link-gb-s", "20")["step_time"]
    two = run_json(*base, "--host-link-gb-s", "40")["step_time"]
    assert one["optimizer_s"] == 0 < one["offload_s"]
    # twice the bandwidth, half the transfer time; the CPU Adam step (the same on both) is
    # what the host adds beside the transfer: offload = transfer + cpu, so
    # one - two = transfer(20 GB/s) / 2 and cpu = one - 2 (one - two)
    transfer_20 = 2 * (one["offload_s"] - two["offload_s"])
    cpu = one["offload_s"] - transfer_20
    assert cpu > 0 and transfer_20 > 0
    # Llama-3.1-8B over 8 GPUs (ZeRO-3: 1/8 of 8,030,261,248 params each), 8 on one host:
    # CPU_ADAM_HOST_S_PER_PARAM (rl_constants.py) x all of the model's parameters
    from rlmcost.perf.rl_constants import CPU_ADAM_HOST_S_PER_PARAM

    assert cpu == pytest.approx(8_030_261_248 * CPU_ADAM_HOST_S_PER_PARAM.value, rel=1e-3)
    # and the note says the host's Adam step is in it (it said "not included")
    notes = run_json(*base)["notes"]
    assert any("then the host's Adam step" in n for n in notes)
    assert not any("not included" in n for n in notes)


def test_an_offloaded_optimizer_leaves_the_gpu():
    """Megatron-core's CPU optimizer offload (hybrid_optimizer.py, offload fraction 1.0) keeps
    the fp32 master weights, m and v on the host: Llama-3.1-8B's 8,030,261,248 parameters
    (config.json, transformers' LlamaForCausalLM count) x 12 B / 8 ZeRO-3 ranks leave the
    device; its gradient buffer and everything else stay."""
    base = ["-m", "llama-3.1-8b", "--gpus", "8", "--zero", "3"]
    on_gpu = run_json(*base)["memory_per_rank_bytes"]
    on_host = run_json(*base, "--offload-optimizer")
    mem = on_host["memory_per_rank_bytes"]
    assert on_gpu["optimizer"] == 8_030_261_248 * 12 // 8 and mem["optimizer"] == 0
    assert mem["total"] == on_gpu["total"] - on_gpu["optimizer"]
    assert {k: v for k, v in mem.items() if k not in ("optimizer", "total")} == {
        k: v for k, v in on_gpu.items() if k not in ("optimizer", "total")}
    assert any("live in host memory" in n for n in on_host["notes"])


def test_bad_attention_kernel_is_a_one_line_error():
    result = runner.invoke(app, ["train", "-m", "8b", "--attention", "sparse"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.strip().startswith("error: --attention")


def test_validate_command():
    result = runner.invoke(app, ["validate", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    sources = {"narayanan2021", "korthikanti2022", "smith2022", "nemo_automodel", "megatron_bridge",
               "megatron_bridge_2608", "megatron_core_h100", "llm_foundry_h100", "llm_foundry_a100",
               "torchtitan_h100", "megatron_moe_modelzoo", "pai_megatron_patch"}
    assert {r["source"] for r in out["rows"]} == sources
    for r in out["rows"]:
        assert r["error"] == pytest.approx(r["predicted"] / r["published"] - 1)
    text = runner.invoke(app, ["validate", "--source", "korthikanti2022"])
    assert text.exit_code == 0 and "MFU" in text.stdout and "mean |error|" in text.stdout
    bad = runner.invoke(app, ["validate", "--source", "nobody"])
    assert bad.exit_code == 2 and bad.output.startswith("error: ")


def test_the_communication_table_is_labelled_a_bound_below_the_steps_exposed_tp():
    # the table times bytes / the datasheet link (450 GB/s NVLink, hardware.json); the step
    # times each TP all-reduce at NCCL's bus efficiency with per-step latency
    # (rlmcost.perf.collectives): TP is all exposed, so the step's TP is the larger
    args = ["-m", "70b", "--tp", "8", "--gpus", "64", "--ckpt", "none"]
    out = run_json(*args)
    (tp,) = [t for t in out["communication"] if t["strategy"] == "tp"]
    assert out["step_time"]["exposed_communication_s"]["tp"] > tp["time_s"]
    text = " ".join(runner.invoke(app, ["train", *args], env={"COLUMNS": "100"}).stdout.split())
    assert "time >=" in text and "a lower bound" in text
    assert "exposed comm can exceed this" in text and "link-bandwidth bound" in text
