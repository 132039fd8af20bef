"""A run over the device at its maximum lengths is told the longest sequence at which it fits
(rlmcost.evaluation.length_advice; issue 18: verl's examples/grpo_trainer/run_qwen2-7b.sh
@b178a3cd5, GSM8K with data.max_prompt_length 512 and max_response_length 1,024, micro-batches
of 40 sequences with padding removed, is 21.5 GiB over the H100 when every sequence is 1,536
tokens; the hint used to say only that shorter responses "may fit").

Independent check: the lengths the hint names are evaluated again, in full, and fit; one step
(1/64 of the maximal sequence) longer does not.
"""

from __future__ import annotations

import re

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.evaluation.length_advice import STEPS, fitting_lengths
from rlmcost.reports.estimate import estimate

# the query `rlmcost import verl examples/grpo_trainer/run_qwen2-7b.sh` prints
QWEN2_7B = ["--framework", "verl", "--model", "Qwen/Qwen2-7B-Instruct", "--kl", "--batch",
            "1024", "--group", "5", "--mini-batches", "4", "--prompt-len", "512",
            "--response-len", "1024", "--gpus", "8", "--zero", "3", "--param-dtype", "fp32",
            "--ckpt", "full", "--logits", "low-memory", "--micro-batch", "40", "--offload-idle",
            "--rollout-tp", "2", "--gpu-memory-utilization", "0.6", "--sleep", "--hardware",
            "h100-sxm", "--no-sized-defaults"]  # fmt: skip


def test_the_hint_names_lengths_that_fit_and_a_step_longer_does_not() -> None:
    from rlmcost.cli.validate import run_from_argv

    run = run_from_argv("rlvr", QWEN2_7B)
    e = estimate(base=run)
    assert not e.fits
    found = fitting_lengths(lambda **c: estimate(base=run, **c), e)
    assert found is not None and found.tokens < 512 + 1024
    assert found.prompt_len * 1024 == found.response_len * 512  # the maxima's proportion
    assert estimate(base=run, prompt_len=found.prompt_len,
                    response_len=found.response_len).fits  # fmt: skip
    step = (512 + 1024) // STEPS
    longer = found.tokens + step
    assert not estimate(base=run, prompt_len=longer // 3, response_len=longer - longer // 3).fits

    res = CliRunner().invoke(app, ["rlvr", *QWEN2_7B])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    said = re.search(r"it fits at sequences of ([\d,]+) tokens or fewer \(--prompt-len (\d+) "
                     r"--response-len (\d+), (\d+)% of the maxima\)", text)  # fmt: skip
    assert said, text[-1500:]
    assert int(said.group(1).replace(",", "")) == found.tokens
    assert (int(said.group(2)), int(said.group(3))) == (found.prompt_len, found.response_len)
    assert "unpadded, a micro-batch holds its sequences' real tokens" in text


def test_a_run_that_fits_or_never_fits_gets_no_lengths() -> None:
    """Fitting already: nothing to find. PPO on Llama-3.1-70B on 8 H100s: its states alone
    exceed the device, so no length fits (and the CLI prints no length line,
    tests/test_fit_hint_plan.py)."""
    from rlmcost.cli.validate import run_from_argv

    argv = list(QWEN2_7B)
    argv[argv.index("--micro-batch") + 1] = "1"
    small = run_from_argv("rlvr", argv)
    e = estimate(base=small)
    assert e.fits and fitting_lengths(lambda **c: estimate(base=small, **c), e) is None
    big = run_from_argv("ppo", ["-m", "70b", "--gpus", "8"])
    e = estimate(base=big)
    assert not e.fits and fitting_lengths(lambda **c: estimate(base=big, **c), e) is None
