"""Speculative decoding (perf/speculative.py, placement/speculative.py): tokens per step, the
engine's step time per token, the verified FLOPs, the timeline, the draft's memory, the CLI.

Reference numbers are hand-computed from the formulas cited in the modules (Leviathan et al.
2023 eq. 1 for the expected tokens; Llama-3.2-1B's config.json for the layer's parameters)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.choices import Dtype
from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.perf.efficiency import Device
from rlmcost.perf.generation import Engine, EngineOptions
from rlmcost.perf.speculative import (
    MTP_ACCEPTANCE,
    Speculation,
    expected_tokens_per_step,
    mtp_arch,
)
from rlmcost.placement.rollout import DecodeCost, decode_flops, timeline
from rlmcost.placement.speculative import step_flops
from rlmcost.specs.registry import get_hardware, get_model
from rlmcost.timing import Roofline

runner = CliRunner()


@pytest.mark.parametrize("p", [0.0, 0.5, MTP_ACCEPTANCE, 1.0])
def test_one_draft_token_emits_one_plus_p(p: float) -> None:
    assert expected_tokens_per_step(1, p) == pytest.approx(1 + p)


def test_three_drafts_at_one_half() -> None:
    # 1 + 1/2 + 1/4 + 1/8
    assert expected_tokens_per_step(3, 0.5) == 1.875


@pytest.mark.parametrize("n, p", [(-1, 0.5), (1, 1.2), (1, -0.1)])
def test_bad_speculation_is_a_spec_error(n: int, p: float) -> None:
    with pytest.raises(SpecError):
        expected_tokens_per_step(n, p)


def test_step_flops_equal_the_sum_over_verified_positions_and_drafts() -> None:
    f0, f1 = decode_flops(get_model("llama-3.2-1b").arch())
    d0, d1 = 1234, 56
    for n in (1, 2, 4):
        big0, big1 = step_flops(f0, f1, d0, d1, n)
        for c in (1, 17, 4096):
            brute = sum(f0 + f1 * (c + i) for i in range(n + 1)) + n * (d0 + d1 * c)
            assert big0 + big1 * c == brute


def _engines(p: float) -> tuple[Engine, Engine]:
    """The GPU side of a step: no per-sequence host time (an engine whose per-request work is
    off the step's critical path, SGLang's overlap scheduler); vLLM's, per sequence and step,
    falls per token under speculation whatever the step's bound."""
    arch = get_model("llama-3.1-8b").arch()
    device = Device(get_hardware("h100-sxm"))
    spec = Speculation(1, p, mtp_arch(arch))
    gpu = EngineOptions(per_sequence_s=0.0)
    return Engine(arch, device, options=gpu), Engine(arch, device, options=gpu, speculation=spec)


def test_memory_bound_decode_gets_cheaper_per_token() -> None:
    """One sequence in flight: every GEMM streams its weights, so verifying 2 positions costs
    about what decoding 1 does; the MTP layer and its shared head add a fraction; over
    1 + P = 1.85 tokens the step's fixed part per token falls, but never below plain / 1.85."""
    plain, spec = _engines(MTP_ACCEPTANCE)
    fixed_plain, _ = plain.decode_step_parts(1)
    fixed_spec, _ = spec.decode_step_parts(1)
    assert fixed_plain / 1.85 < fixed_spec < 0.7 * fixed_plain


def test_compute_bound_decode_gets_dearer_per_token() -> None:
    """4,096 sequences in flight: the GEMMs are compute-bound, verifying 2 positions doubles
    them, and at P = 0.5 a step emits 1.5 tokens: per token about 2 / 1.5 of plain."""
    plain, spec = _engines(0.5)
    fixed_plain, _ = plain.decode_step_parts(4096)
    fixed_spec, _ = spec.decode_step_parts(4096)
    assert fixed_spec > 1.2 * fixed_plain


def test_attention_per_context_token_reads_the_cache_once() -> None:
    """Llama-3.1-8B's GQA decode attention is memory-bound even at 2 queries per sequence: its
    KV bytes are read once per step by the model and once by the one-layer MTP block (1/32 of
    the model's 32 layers), over 1 + P tokens."""
    plain, spec = _engines(MTP_ACCEPTANCE)
    _, per_plain = plain.decode_step_parts(8)
    _, per_spec = spec.decode_step_parts(8)
    assert per_spec == pytest.approx(per_plain * (1 + 1 / 32) / (1 + MTP_ACCEPTANCE), rel=1e-12)


def test_timeline_divides_each_decode_step_by_the_tokens_it_emits() -> None:
    arch = get_model("llama-3.2-1b").arch()
    f0, f1 = decode_flops(arch)
    one = DecodeCost(f0, f1, 10**9, 2.5e9, 32768.0)
    two = DecodeCost(f0, f1, 10**9, 2.5e9, 32768.0, tokens_per_step=2.0)
    roof = Roofline(get_hardware("h100-sxm"), 1, Dtype.BF16)
    lengths = (100, 300, 200, 50)
    a = timeline(arch, 64, lengths, 2, one, roof)
    b = timeline(arch, 64, lengths, 2, two, roof)
    assert [(r.first, r.last, r.active) for r in a.runs] == [
        (r.first, r.last, r.active) for r in b.runs]  # fmt: skip
    for ra, rb in zip(a.runs, b.runs, strict=True):
        assert rb.bound_s == pytest.approx(ra.bound_s / 2, rel=1e-12)


#: Llama-3.2-1B's shape (meta-llama/Llama-3.2-1B config.json) with one multi-token-prediction
#: module (``num_nextn_predict_layers`` 1, the DeepSeek-V3 / GLM-4.5 key): a small model an
#: ``mtp`` draft may run on (Llama-3.2-1B itself ships none).
MTP_MODEL = str(Path(__file__).parent / "data" / "models" / "llama-1b-mtp.json")


@pytest.fixture(scope="module")
def mtp_model() -> str:
    return MTP_MODEL


def _generation(*flags: str, model: str = "llama-3.2-1b") -> dict:
    r = runner.invoke(app, ["grpo", "--model", model, "-H", "h100-sxm", "--json",
                            *flags])  # fmt: skip
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["stages"]["generation"]


def test_the_mtp_layer_weights_sit_in_the_engine(mtp_model: str) -> None:
    """Llama-3.2-1B's shape (config.json: d 2048, 32 heads, 8 KV heads of 64, d_ff 8192): one
    decoder layer 2 x 2048^2 + 2 x 2048 x 512 (q, o, k, v) + 3 x 2048 x 8192 (gated FFN) +
    2 x 2048 (norms) = 60,821,504 parameters, the MTP projection 2 x 2048^2 = 8,388,608; bf16."""
    plain = _generation(model=mtp_model)["memory_breakdown_bytes"]["weights"]
    spec = _generation("--speculative-tokens", "1", model=mtp_model)
    assert spec["memory_breakdown_bytes"]["weights"] - plain == (60_821_504 + 8_388_608) * 2


def test_the_built_in_mtp_checkpoints() -> None:
    """DeepSeek-V3/R1 and GLM-4.5/4.6 configs: num_nextn_predict_layers 1; Qwen3-Next:
    mtp_num_hidden_layers 1; Llama and Qwen3 configs have neither key."""
    for name in ("deepseek-v3", "deepseek-r1", "glm-4.5", "glm-4.5-air", "glm-4.6",
                 "qwen3-next-80b-a3b"):  # fmt: skip
        assert get_model(name).mtp_layers == 1, name
    for name in ("llama-3.1-8b", "qwen3-30b-a3b", "qwen3-32b"):
        assert get_model(name).mtp_layers == 0, name


def test_speculation_shortens_a_memory_bound_rollout(mtp_model: str) -> None:
    plain = _generation(model=mtp_model)
    spec = _generation("--speculative-tokens", "1", model=mtp_model)
    assert spec["compute_time_s"] > plain["compute_time_s"]  # verified positions and the draft
    assert spec["memory_time_s"] < plain["memory_time_s"]  # weights read once per 1.85 tokens
    assert spec["time_s"] < plain["time_s"]


def test_cli_flags_and_errors(mtp_model: str) -> None:
    ok = runner.invoke(app, ["grpo", "--model", mtp_model, "--speculative-tokens", "1"])
    assert ok.exit_code == 0, ok.output
    assert "speculative decoding: 1 draft token(s) per step from the model's MTP layer" in \
        ok.output  # fmt: skip
    none = runner.invoke(app, ["grpo", "--model", "llama-3.2-1b", "--speculative-tokens", "1"])
    assert none.exit_code == 2 and "no multi-token-prediction layer" in none.output, none.output
    assert "Traceback" not in none.output
    for bad in (["--speculative-draft", "llama-3.2-1b"], ["--engine", "hf"],
                ["--speculative-acceptance", "1.5"]):  # fmt: skip
        r = runner.invoke(app, ["grpo", "--model", "llama-3.1-8b", "--speculative-tokens", "1",
                                *bad])  # fmt: skip
        assert r.exit_code == 2, (bad, r.output)
        assert "Traceback" not in r.output
    helped = runner.invoke(app, ["grpo", "--help"])
    assert "--speculative-tokens" in helped.output and "--speculative-acceptance" in \
        helped.output  # fmt: skip


def test_a_draft_model_with_its_acceptance() -> None:
    """Llama-3.2-1B drafting for itself: the engine holds its weights twice (the draft model
    in full, its own embedding and head; tp 1, bf16)."""
    spec = _generation("--speculative-tokens", "2", "--speculative-draft", "llama-3.2-1b",
                       "--speculative-acceptance", "0.6")  # fmt: skip
    plain = _generation()
    w_spec = spec["memory_breakdown_bytes"]["weights"]
    assert w_spec == 2 * plain["memory_breakdown_bytes"]["weights"]


def test_the_command_rebuilds_a_speculative_run() -> None:
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.run.command import to_command

    flags = ["--speculative-tokens", "2", "--speculative-draft", "llama-3.2-1b",
             "--speculative-acceptance", "0.6"]  # fmt: skip
    run = run_from_argv("grpo", ["--model", "llama-3.1-8b", *flags])
    e = run.deployment.engine
    assert (e.speculative_tokens, e.speculative_draft, e.speculative_acceptance) == \
        (2, "llama-3.2-1b", 0.6)  # fmt: skip
    words = to_command(run).split()
    assert run_from_argv("grpo", words[2:]) == run


DATA = Path(__file__).parent / "data" / "frameworks"


def _import_flags(q) -> dict:  # noqa: ANN001
    return {c.flag: c.value for c in q.conversions} | dict(q.flags)


def test_nemo_rl_import_reads_the_speculative_config() -> None:
    """NeMo RL's DeepSeek-V3 recipes at v0.7.0 pass vllm_kwargs.speculative_config
    {method: deepseek_mtp, num_speculative_tokens: 1} (commit 2369c0aec)."""
    from rlmcost.frameworks.nemo_rl import import_nemo_rl

    key = "policy.generation.vllm_kwargs.speculative_config"
    cfg = DATA / "nemo_rl_grpo_math.yaml"
    assert "--speculative-tokens" not in _import_flags(import_nemo_rl(cfg, [], 200))
    on = import_nemo_rl(cfg, [f"{key}.method=deepseek_mtp",
                              f"{key}.num_speculative_tokens=1"], 200)  # fmt: skip
    assert _import_flags(on)["--speculative-tokens"] == 1
    other = import_nemo_rl(cfg, [f"{key}.method=eagle", f"{key}.num_speculative_tokens=3"], 200)
    assert "--speculative-tokens" not in _import_flags(other)
    assert any("only MTP drafts" in n for n in other.notes)


def test_verl_import_reads_model_mtp_enable_rollout() -> None:
    """verl (b178a3c) passes speculative_config to vLLM when model.mtp.enable and
    enable_rollout are both on (vllm_async_server.py)."""
    from rlmcost.frameworks.verl import import_verl

    cfg = DATA / "verl_grpo.yaml"
    m = "+actor_rollout_ref.model.mtp"
    assert "--speculative-tokens" not in _import_flags(import_verl(cfg))
    half = import_verl(cfg, [f"{m}.enable=true"])
    assert "--speculative-tokens" not in _import_flags(half)
    on = import_verl(cfg, [f"{m}.enable=true", f"{m}.enable_rollout=true",
                           f"{m}.num_speculative_tokens=2"])  # fmt: skip
    assert _import_flags(on)["--speculative-tokens"] == 2


@pytest.mark.parametrize("groups", [["--gpus", "8"],
                                    ["--gpus", "12", "--groups", "actor+reference=8,judge=4"]])
def test_a_judge_does_not_draft_with_the_rollouts_speculation(groups: list[str]) -> None:
    """--speculative-tokens is the policy's rollout engine's (verl actor_rollout_ref.model.mtp,
    NeMo RL vllm_kwargs speculative_config): a judge without an MTP layer, colocated or on its
    own group, generates its verdicts without it (it had been refused: no MTP layer)."""
    args = ["d-rlaif", "-m", "mimo-7b", "--judge", "qwen2.5-1.5b", "--judge-len", "512",
            "-H", "h100", *groups, "--json"]  # fmt: skip
    base = CliRunner().invoke(app, args)
    spec = CliRunner().invoke(app, [*args, "--speculative-tokens", "1"])
    assert base.exit_code == 0 and spec.exit_code == 0, spec.output
    phases = [{p["name"]: p["time_s"] for p in json.loads(r.output)["phases"]}
              for r in (base, spec)]  # fmt: skip
    assert phases[1]["generation"] < phases[0]["generation"]  # the policy drafts
    assert phases[1]["reward"] == pytest.approx(phases[0]["reward"])  # the judge does not
