"""`rlmcost validate --memory`: published GPU-memory measurements against rlmcost's memory.

The table (rlmcost/perf/data/memory_runs.json) loads and is checked; every row predicts or says
why not; two rows' bytes are checked against hand arithmetic from the models' published shapes
(Llama-3.1-8B's Hugging Face config: 8,030,261,248 parameters, vocabulary 128,256) and the
allocator slack rlmcost states (rlmcost/deployment/overhead.py); the Trainy rows' compiled loss
and the 70B row's loss parallel against the bytes torch keeps (torchtitan components/loss.py
@e7c0cae, torch tensor/parallel/loss.py; measured on CPU in tests/test_framework_memory.py); the
interval's range against GMLake's published fragmentation (arXiv 2401.08156: 15 %, up to
33 %)."""

from __future__ import annotations

import json
from math import ceil

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv, train_json
from rlmcost.errors import SpecError
from rlmcost.perf.validate_memory import (
    SLACK_RANGE,
    SLACK_RANGE_EXPANDABLE,
    check_row,
    load_table,
    predict,
    validate_memory,
)

LLAMA_31_8B_PARAMS = 8_030_261_248  # meta-llama/Llama-3.1-8B config.json's shapes, summed
LLAMA_3_VOCAB = 128_256  # its config.json "vocab_size"
GIB = 2**30
MIB = 2**20


@pytest.fixture(scope="module")
def checked():
    return validate_memory(train_json, run_from_argv)


def _row(rid: str) -> dict:
    return next(r for r in load_table()["rows"] if r["id"] == rid)


def test_table_has_rows_from_three_sources() -> None:
    table = load_table()
    assert len(table["rows"]) >= 15
    assert len({r["source"] for r in table["rows"]}) >= 3
    for src in table["sources"].values():
        assert src["url"] and src["measured"]


def test_every_row_predicts_or_says_why(checked) -> None:
    for r in checked.rows:
        if r.status == "ok":
            assert r.predicted_bytes and r.predicted_bytes > 0 and r.interval_bytes
            assert r.interval_bytes[0] <= r.predicted_bytes <= r.interval_bytes[1]
        else:
            assert r.status.startswith("not predicted: ") and len(r.status) > 20
    summary = checked.summary()
    assert summary["all"]["rows"] == len(checked.rows)
    assert set(summary) == {r.source for r in checked.rows} | {"all"}


def test_cp_row_states_and_logits_by_hand() -> None:
    """tt-h100-8b-fsdp8-cp1: FSDP (ZeRO-3) over 8 ranks, bf16 weights and gradients, fp32
    master + Adam m, v (16 B a parameter in all, sharded by 8), and the logits of one
    32,768-token sequence as torchtitan's loss F.cross_entropy(pred.float()) holds them at the
    backward's start without PP: three fp32 copies (the log-softmax, its gradient, the input's
    gradient; 12 B a logit, measured on CPU in tests/test_framework_memory.py)."""
    row = _row("tt-h100-8b-fsdp8-cp1")
    out = train_json(row["command"].split()[2:])
    m = out["memory_per_rank_bytes"]
    assert m["weights"] + m["gradients"] + m["optimizer"] == 16 * LLAMA_31_8B_PARAMS // 8
    assert m["logits"] == 32_768 * LLAMA_3_VOCAB * 12
    got = predict(row, train_json, run_from_argv)
    # reserved = allocated + the expandable-segments slack (torchtitan's launcher sets it)
    assert got.allocated_bytes == m["total"]
    assert got.predicted_bytes == m["total"] + ceil(m["total"] * 0.02)
    low, high = SLACK_RANGE_EXPANDABLE
    assert got.interval_bytes == (m["total"] + ceil(m["total"] * low),
                                  m["total"] + ceil(m["total"] * high))  # fmt: skip


def test_eight_and_128_gpu_rows_differ_by_the_sharded_states() -> None:
    """Table 1 vs Table 3 (8 vs 128 FSDP ranks, the same local batch): the allocated peaks
    differ by the 16 B a parameter of states, sharded by 8 and by 128."""
    a = predict(_row("tt-h100-8b-8gpu-compile"), train_json, run_from_argv)
    b = predict(_row("tt-h100-8b-128gpu-compile"), train_json, run_from_argv)
    assert a.allocated_bytes is not None and b.allocated_bytes is not None
    states = 16 * LLAMA_31_8B_PARAMS
    assert a.allocated_bytes - b.allocated_bytes == states // 8 - states // 128


def test_published_figures_as_the_sources_print_them() -> None:
    # torchtitan benchmarks/llama3_h100_202412_torchtitan.md Table 2, 'FSDP 8, CP 1': 83.9 GiB
    assert _row("tt-h100-8b-fsdp8-cp1")["published_gib"] == 83.9
    assert _row("tt-h100-8b-fsdp8-cp1")["measured"] == "reserved"
    # verl docs/perf/dpsk.md Benchmark: DeepSeek 671b, 96 GPUs, GPU memory 66
    assert _row("verl-dpsk-doc-deepseek-v3-96gpu")["published_gib"] == 66


def test_bad_rows_are_refused() -> None:
    sources = load_table()["sources"]
    good = dict(_row("tt-h100-8b-8gpu-eager"))
    with pytest.raises(SpecError, match="measured"):
        check_row({**good, "measured": "smi"}, sources)
    with pytest.raises(SpecError, match="unknown source"):
        check_row({**good, "source": "nowhere"}, sources)
    with pytest.raises(SpecError, match="needs 'command'"):
        check_row({**good, "command": ""}, sources)
    with pytest.raises(SpecError, match="no memory rows"):
        validate_memory(train_json, run_from_argv, "nowhere")


def test_a_command_the_train_cli_rejects_is_a_stated_row() -> None:
    row = {**_row("tt-h100-8b-8gpu-eager"), "command": "rlmcost train -m llama-3.1-8b --tp 0"}
    got = predict(row, train_json, run_from_argv)
    assert got.status.startswith("not predicted: ") and got.predicted_bytes is None


def test_cli_json() -> None:
    res = CliRunner().invoke(app, ["validate", "--memory", "--source", "torchtitan_h200_trainy",
                                   "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert {r["source"] for r in out["memory_rows"]} == {"torchtitan_h200_trainy"}
    assert out["memory_summary"]["all"]["predicted"] == 2


def test_trainy_rows_run_the_compiled_loss() -> None:
    """Trainy's command has --training.compile, which at torchtitan e7c0cae compiles the loss
    (components/loss.py build_cross_entropy_loss): the bf16 logits of one 2 x 8,192-token
    micro-batch and their bf16 gradient, 4 B a logit, + 3 fp32 a position."""
    row = _row("trainy-h200-8b-32gpu-float8")
    assert "--loss-logits compiled" in row["command"]
    m = train_json(row["command"].split()[2:])["memory_per_rank_bytes"]
    assert m["logits"] == 16_384 * (LLAMA_3_VOCAB * 4 + 12)


def test_70b_row_runs_loss_parallel() -> None:
    """torchtitan's TP 8 runs loss parallel (its default): 16 B per logit of the 16,032-wide
    vocabulary shard (torch tensor/parallel/loss.py's backward: the saved log-softmax, the
    zero-filled gradient, its exp and their sum) over 16 x 8,192 tokens."""
    m = train_json(_row("tt-h100-70b-256gpu-2d")["command"].split()[2:])["memory_per_rank_bytes"]
    assert m["logits"] == 16 * 8192 * (-(-LLAMA_3_VOCAB // 8)) * 16


def test_slack_ranges_are_gmlakes_fragmentation() -> None:
    """GMLake (Guo et al., ASPLOS 2024, abstract): PyTorch's allocator fragments 15 % of the
    reserved memory on average, up to 33 %; reserved / allocated - 1 = f / (1 - f)."""
    assert SLACK_RANGE_EXPANDABLE == (0.0, 15 / 85)
    assert SLACK_RANGE[1] == pytest.approx(33 / 67)


def test_a_row_of_unnamed_metric_spans_allocated_to_reserved() -> None:
    """verl's dpsk.md names no metric; verl logs max_memory_allocated and max_memory_reserved:
    the prediction is the allocated peak, the interval up to the reserved peak's high end."""
    row = _row("verl-dpsk-doc-deepseek-v3-96gpu")
    assert row["measured"] == "allocated_or_reserved"
    got = predict(row, train_json, run_from_argv)
    a = got.allocated_bytes
    assert a and got.predicted_bytes == a
    assert got.interval_bytes == (a, a + ceil(a * SLACK_RANGE[1]))


# --- engine rows: vLLM / SGLang KV-cache pools (rlmcost/perf/validate_memory_engine.py) ---

LLAMA2_7B_KV_PER_TOKEN = 32 * 2 * 32 * 128 * 2  # Llama-2-7b config.json: 32 layers, 32 KV
# heads of 128, K and V, bf16 (fp16 in the run: the same bytes)
QWEN3_235B_KV_PER_TOKEN_TP4 = 94 * 2 * (4 // 4) * 128 * 2  # Qwen3-235B-A22B config.json: 94
# layers, 4 KV heads of 128, one per GPU at TP 4


def test_engine_rows_load_from_three_sources() -> None:
    rows = [r for r in load_table()["rows"] if r["kind"] == "engine"]
    assert len(rows) >= 12
    assert len({r["source"] for r in rows}) >= 3
    for r in rows:
        assert r["measured"] in ("kv_gib", "kv_tokens")
        assert r.get("not_predicted") or r["command"].startswith("rlmcost grpo")


def test_llama2_7b_pool_in_blocks_by_hand() -> None:
    """vLLM PR 2031, Llama-2-7B on one A100-80GB at gpu_memory_utilization 0.9: the pool is the
    reservation less the weights and the profile's peak; its tokens are whole blocks of 16 of
    the 0.5 MiB a token that 32 layers x 32 KV heads x 128 x K, V x 2 B hold."""
    row = _row("vllm-pr2031-llama2-7b-a100-tp1-main")
    got = predict(row, train_json, run_from_argv)
    assert got.status == "ok" and got.predicted_bytes is not None
    blocks = got.predicted_bytes // (16 * LLAMA2_7B_KV_PER_TOKEN)
    assert got.predicted_tokens == 16 * blocks
    # the PR's log: # GPU blocks 7449 before its fix (x 16 tokens)
    assert row["published_tokens"] == 7449 * 16
    assert abs(got.error) < 0.02


def test_qwen3_235b_sglang_tokens_by_hand() -> None:
    """vLLM issue 21348, SGLang at TP 4 and mem_fraction_static 0.93: SGLang's page is one
    token of 94 layers x 1 KV head per GPU x 128 x K, V x 2 B = 48,128 B (the log's "K size:
    8.23 GB" is 367,404 x 24,064 B = 8.23 GiB), so the tokens are the pool over that."""
    assert round(367_404 * QWEN3_235B_KV_PER_TOKEN_TP4 / 2 / GIB, 2) == 8.23
    got = predict(_row("vllm-issue21348-qwen3-235b-fp8-h100-tp4-sglang"), train_json,
                  run_from_argv)  # fmt: skip
    assert got.predicted_bytes is not None and got.interval_tokens is not None
    assert got.predicted_tokens == got.predicted_bytes // QWEN3_235B_KV_PER_TOKEN_TP4
    low, high = got.interval_tokens
    assert low <= got.predicted_tokens <= high


def test_engine_rows_refuse_a_missing_figure() -> None:
    sources = load_table()["sources"]
    good = dict(_row("vllm-pr2031-llama2-7b-a100-tp1"))
    with pytest.raises(SpecError, match="published_tokens"):
        check_row({**good, "published_tokens": 0}, sources)
    with pytest.raises(SpecError, match="profile"):
        check_row({**good, "profile": "vllm-9"}, sources)
    with pytest.raises(SpecError, match="engine rows"):
        check_row({**_row("tt-h100-8b-8gpu-eager"), "measured": "kv_tokens"}, sources)


def test_v0_profile_peak_is_the_top_k_top_p_sampler_by_hand() -> None:
    """vLLM PR 10511's log (V0, v0.6.5 dev, Meta-Llama-3-8B on one H100, 256 sequences, 8192
    batched tokens): 'PyTorch activation peak memory 1.26GiB', the same at -tp 2. V0's
    sampler with top-k/top-p (vllm/model_executor/layers/sampler.py _apply_top_k_top_p) holds
    bf16 logits 2 + fp32 copy 4 + sorted 4 + int64 indices 8 + top-k mask 1 + probs 4 + cumsum
    4 + top-p mask 1 + inverse permutation 8 + gathered 4 = 40 B a logit, beside the 8192 x
    4096 bf16 hidden states: 1.29 GiB, the log's figure within 3 %."""
    from rlmcost.deployment.vllm_profile import V0_SAMPLER_BYTES_PER_LOGIT, v0_profile_peak_bytes

    assert V0_SAMPLER_BYTES_PER_LOGIT == 2 + 4 + 4 + 8 + 1 + 4 + 4 + 1 + 8 + 4
    peak = 40 * 256 * 128_256 + 8192 * 4096 * 2
    assert v0_profile_peak_bytes(0, 256, 128_256, 8192, 4096, 2) == peak
    assert v0_profile_peak_bytes(peak + 1, 256, 128_256, 8192, 4096, 2) == peak + 1
    assert abs(peak / GIB / 1.26 - 1) < 0.03
    row = _row("vllm-pr10511-llama3-8b-h100-tp1")
    assert row["profile"] == "vllm-v0.6.5"
    got = predict(row, train_json, run_from_argv)
    v1 = predict({**row, "profile": "vllm-v0.7+"}, train_json, run_from_argv)
    assert got.predicted_bytes is not None and v1.predicted_bytes is not None
    # the V1 peak the RL evaluation prices here is the 8192-token forward (the sampler's 256
    # rows x 10 B are less): the V0 pool is smaller by V0's peak less that forward
    assert 0 < v1.predicted_bytes - got.predicted_bytes < peak
    assert got.error is not None and v1.error is not None and abs(got.error) < abs(v1.error)


def test_v0_row_needs_its_batch_keys() -> None:
    sources = load_table()["sources"]
    row = dict(_row("vllm-pr10511-llama3-8b-h100-tp1"))
    with pytest.raises(SpecError, match="max-num-seqs"):
        check_row({**row, "command": row["command"].replace("max-num-seqs=256;", "")}, sources)


def test_rows_of_unmodelled_memory_are_kept_out_with_their_reason() -> None:
    """vLLM PR 2031 at TP 4: the fix took 31,615 - 20,865 = 10,750 blocks of 16 tokens x 80
    layers x 2 KV heads per GPU x 128 x K, V x 2 B = 1.25 MiB, 13.1 GiB a GPU, against 98
    blocks x 8 MiB = 784 MiB at TP 1: the allocator's blocks held by record_stream under the
    TP all-reduces (160 of 4096 x 8192 x 2 B = 10 GiB), which vLLM 0.2.7 stopped (vLLM issue
    2248). Issue 21348's vLLM engine runs the LMCache connector, whose buffers are unstated."""
    block_70b_tp4 = 16 * 80 * 2 * 128 * 2 * 2
    assert block_70b_tp4 == 5 * MIB // 4
    assert round((31_615 - 20_865) * block_70b_tp4 / GIB, 1) == 13.1
    assert (7449 - 7351) * 16 * LLAMA2_7B_KV_PER_TOKEN == 784 * MIB
    assert 80 * 2 * 4096 * 8192 * 2 == 10 * GIB
    for rid, word in (("vllm-pr2031-llama2-70b-a100-tp4", "record_stream"),
                      ("vllm-issue21348-qwen3-235b-fp8-h100-tp4-vllm", "LMCache")):  # fmt: skip
        got = predict(_row(rid), train_json, run_from_argv)
        assert got.status.startswith("not predicted") and word in got.status
