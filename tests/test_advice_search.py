"""The fit advice names what makes a run fit: CP with what NeMo RL's DTensor policy needs beside
it (packing off), combinations when no single change fits, what helps a host short of memory,
a run already past its model's context, and only the TP degrees a model's heads take."""

import json
import re

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.units import format_bytes

runner = CliRunner()

LONG = ("grpo", "-m", "qwen2.5-7b", "-H", "h100", "--response-len", "4096")
"""Long prompts under NeMo RL's default deployment (its DTensor policy packs sequences)."""


def run(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def _fixes(out: str) -> list[tuple[str, str]]:
    """(flags, peak) of each "fits with" line."""
    return re.findall(r"fits with (.+?): peak (.+?) per device\.", out)


def _reproduces(base: tuple[str, ...], flags: str, peak: str) -> None:
    """The suggestion's flags, given on the query in place of the query's own, fit at the
    peak it printed."""
    words = [w.strip("'") for w in flags.split()]
    named, kept, skip = {w for w in words if w.startswith("--")}, [], False
    for i, w in enumerate(base):
        if skip:
            skip = False
            continue
        if w in named:
            skip = i + 1 < len(base) and not base[i + 1].startswith("-")
            continue
        kept.append(w)
    r = run(*kept, *words, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["fits"] is True, flags
    top = max(s["memory_bytes_per_device"] for s in out["stages"].values())
    assert format_bytes(top) == peak, (flags, peak)


def test_cp_under_dtensor_packing_is_advised_with_packing_off():
    # The review's query: Qwen2.5-7B, 32K prompts on 16 H100s. NeMo RL's DTensor policy refuses
    # CP with packing (dtensor_policy_worker.py, megatron_engine.check_dtensor_packing), so a
    # bare --cp was refused and the advice said no change fits; CP 8 with packing off fits
    # (the CP recipe dapo-qwen2.5-7b-16n4g-fsdp2cp2.v2.yaml turns packing off the same way)
    base = (*LONG, "--gpus", "16", "--prompt-len", "32768")
    r = run(*base)
    assert r.exit_code == 0, r.output
    assert "no change of" not in r.stdout
    fixes = _fixes(r.stdout)
    assert fixes and fixes[0][0] == "--cp 8 --no-packing"
    for flags, peak in fixes:
        _reproduces(base, flags, peak)


def test_no_single_change_fits_a_combination_does_and_reproduces():
    # 64K prompts on 8 H100s: no single change fits (CP stops at the 8 GPUs' DP, a full
    # checkpointing alone leaves the activations of one 68K-token sequence), so the search pairs
    # the smallest CP under which everything fits with each state change: CP 4 with full
    # checkpointing; TP's pair likewise. Each line, given as flags, fits at its printed peak.
    base = (*LONG, "--gpus", "8", "--prompt-len", "65536")
    r = run(*base)
    assert r.exit_code == 0, r.output
    fixes = _fixes(r.stdout)
    assert ("--cp 4 --no-packing --ckpt full" in [f for f, _ in fixes]), r.stdout
    assert any(f.startswith("--tp 4 ") for f, _ in fixes)  # Qwen2.5-7B's 28 heads take TP 4
    for flags, peak in fixes:
        _reproduces(base, flags, peak)


def test_the_search_is_bounded():
    # every try is one evaluation: the singles (about a dozen here) and the search's 1 +
    # degrees + state changes; counted, not timed
    from rlmcost.evaluation.advice import suggestions
    from rlmcost.reports.estimate import estimate

    e = estimate("grpo", "qwen2.5-7b", hardware="h100", gpus=8, prompt_len=65536,
                 response_len=4096, framework="nemo-rl")  # fmt: skip
    calls = []

    def counted(**changes):
        calls.append(changes)
        return estimate(base=e.run, **changes)

    found = suggestions(counted, e)
    assert found and len(calls) <= 30, len(calls)


def test_degree_ladders_take_only_the_model_s_widths():
    # Qwen2.5-7B: 28 heads, 4 KV heads, FFN 18944 (its config.json): TP 2 and 4, never 8;
    # CP doubles while DP gives the ranks (16 GPUs: 2, 4, 8, 16)
    from rlmcost.evaluation.advice_search import degree_changes
    from rlmcost.parallel.validate import tp_widths
    from rlmcost.reports.estimate import estimate

    e = estimate("grpo", "qwen2.5-7b", hardware="h100", gpus=16, prompt_len=32768,
                 response_len=4096, framework="nemo-rl")  # fmt: skip
    widths = tp_widths(e.evaluation.specs[next(iter(e.evaluation.specs))].arch())
    assert widths[:2] == (28, 4)
    flags = [f for f, _, _ in degree_changes(e.layout, e.deployment, 8, "activations", widths)]
    assert flags == ["--cp 2 --no-packing", "--cp 4 --no-packing", "--cp 8 --no-packing",
                     "--cp 16 --no-packing", "--tp 2", "--tp 4"]  # fmt: skip


HOST = ("grpo", "-m", "qwen2.5-7b", "-H", "h100", "--gpus", "8", "--zero", "3", "--offload",
        "optimizer,params,grads", "--host-memory-gib", "200")  # fmt: skip


def test_a_host_short_of_memory_is_advised_what_lowers_the_host():
    # the devices hold it (peak 52 GiB) but a node holds 227 GiB of offloaded states and idle
    # models over the 200 GiB given (placement.host_memory); more checkpointing or TP does not
    # lower the host: keeping everything on the devices does (114 GiB on the host, 66 GiB a GPU)
    r = run(*HOST)
    assert r.exit_code == 0, r.output
    assert "problem: host memory" in r.stdout
    fixes = _fixes(r.stdout)
    assert [f for f, _ in fixes] == ["--offload '' --no-offload-idle"], r.stdout
    assert "--ckpt" not in " ".join(f for f, _ in fixes)
    _reproduces(HOST, *fixes[0])


def test_a_host_no_offload_change_mends_names_more_gpus_and_the_host_figure():
    # the review's query: Qwen3-235B-A22B's states offloaded from 8 H100s hold 4.28 TiB on a
    # DGX H100's 2 TB host (its datasheet); no offload change fits the devices, so the hint
    # is more GPUs (the planner's query) and --host-memory-gib as the servers' figure
    r = run("grpo", "-m", "qwen3-235b-a22b", "-H", "h100", "--framework", "nemo-rl", "--zero",
            "3", "--offload", "optimizer,params,grads", "--rollout-tp", "8",
            "--gpu-memory-utilization", "0.9", "--gpus", "8")  # fmt: skip
    assert r.exit_code == 0, r.output
    line = next(x for x in r.stdout.splitlines() if "host memory, not the devices" in x)
    assert "--ckpt" not in line and "--tp" not in line
    assert "--min-gpus" in line and "--host-memory-gib N" in line and "not a fix" in line


def test_a_run_past_its_context_is_not_given_a_longest_beyond_it():
    # NeMo RL's dapo-qwen2.5-7b.v2.yaml runs Qwen2.5-Math-7B (max_position_embeddings 4096 in
    # its config.json) at 8192 + 8192 tokens, with hf_config_overrides raising the context
    # to 16384; without the override vLLM refuses the 8192-token prompt (rlmcost.run.
    # prompt_context), so a 2048-token prompt here: a "longest response" stopped by a
    # 4096-token context would contradict the run; the run is said to be past it
    r = run("grpo", "-m", "qwen2.5-math-7b", "--gpus", "8", "--prompt-len", "2048",
            "--response-len", "8192", "--cp", "4", "--no-packing")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "stopped by the model's trained context" not in r.stdout
    assert ("longest response: none searched past the run's 8,192 tokens, which fit; its "
            "prompt + response, 10,240 tokens, are already past the model's trained context "
            "of 4,096 tokens") in r.stdout  # fmt: skip


def test_gpus_tp_does_not_divide_name_only_degrees_the_heads_take():
    # Llama-3.1-8B: 32 heads, 8 KV heads (its config.json); 7 GPUs take TP 1 or 7, and 7
    # divides neither head count
    for args in (("grpo", "-m", "llama-3.1-8b", "--gpus", "7", "--tp", "2"),
                 ("train", "-m", "llama-3.1-8b", "--gpus", "7", "--tp", "2")):  # fmt: skip
        r = run(*args)
        assert r.exit_code != 0
        assert "--tp 1" in r.output and "7" not in r.output.split("--tp 1")[1].split("\n")[0]
    r = run("grpo", "-m", "llama-3.1-8b", "--gpus", "12", "--tp", "8")
    assert "or --tp 1, 2 or 4" in r.output  # 12 GPUs take 1, 2, 3, 4, 6; the heads 1, 2, 4
