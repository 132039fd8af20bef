"""`rlmcost train` on a layout that does not fit: the changes that make it fit, each checked by
rebuilding the report (as the RL commands' "fits with" advice), and its wording."""

import re

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.reports.train import train_report
from rlmcost.reports.train_advice import train_fixes

runner = CliRunner()


def _train(*args: str) -> str:
    result = runner.invoke(app, ["train", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_70b_on_one_node_gets_a_fix_that_fits():
    # Llama-3.1-70B on 8 GPUs: 18 B a parameter of weights, gradients and Adam states over 8
    # ranks is > 140 GiB a rank alone, so only more GPUs (ZeRO-3 over their data ranks) fit
    out = _train("-m", "70b", "--gpus", "8", "--tp", "8", "--zero", "3")
    assert "DOES NOT FIT: " in out and "(largest term: optimizer)" in out
    m = re.search(r"fits with (--gpus (\d+)[^:]*): peak", out)
    assert m is not None, out
    flags = m.group(1).split()
    again = _train("-m", "70b", "--tp", "8", "--zero", "3", *flags)
    assert "DOES NOT FIT" not in again and re.search(r"total +│ [\d.]+ GiB │ fits", again)


def test_each_fix_is_checked():
    lay = Layout(dp=8, micro_batch=1)

    def rerun(layout, gpus):
        return train_report("llama-3.1-8b", layout, "h100-sxm", gpus, 32768)

    report = rerun(lay, 8)
    assert not report.fits
    fixes = train_fixes(report, rerun, 8, (32, 8, 14336))
    assert fixes
    for f in fixes:  # rebuild each named change: it fits, at the peak it states
        words = f.flags.split()
        changes = {"tp": None, "pp": None, "cp": None}
        for name in changes:
            if f"--{name}" in words:
                changes[name] = int(words[words.index(f"--{name}") + 1])
        kw = {k: v for k, v in changes.items() if v}
        dp = 8 // (kw.get("tp", 1) * kw.get("pp", 1) * kw.get("cp", 1))
        fixed = lay.with_(dp=dp, **kw,
                          zero=ZeroStage.OS_G_P if "--zero" in words else lay.zero,
                          ckpt=Checkpointing.FULL if "--ckpt" in words else lay.ckpt,
                          sp="--sp" in words)  # fmt: skip
        again = rerun(fixed, 8)
        assert again.fits and again.memory.total == f.peak_bytes


def test_wording_singular_and_recompute():
    out = _train("-m", "llama-3.2-1b", "--gpus", "1")
    # one sequence, one micro-batch: singular nouns
    assert "batch defaulted to 1 sequence (1 micro-batch)" in out
    # the activations row says what --ckpt none means, not the bare enum value
    assert re.search(r"activations +│[^│]+│ bf16, no recompute", out)
    full = _train("-m", "llama-3.2-1b", "--gpus", "1", "--ckpt", "full")
    assert re.search(r"activations +│[^│]+│ bf16, full recompute", full)


def test_json_carries_the_advice_and_each_fits():
    # the same advice as the text's "fits with" lines (test_70b_on_one_node_gets_a_fix_that_fits:
    # > 140 GiB a rank of states over 8 ranks), each entry's flags re-run with --json fit at the
    # peak the entry states
    import json

    out = json.loads(_train("-m", "70b", "--gpus", "8", "--tp", "8", "--zero", "3", "--json"))
    assert out["fits"] is False
    text = _train("-m", "70b", "--gpus", "8", "--tp", "8", "--zero", "3")
    said = re.findall(r"fits with ([^:]+): peak", text)
    advice = out["fit_advice"]
    assert [a["flags"] for a in advice] == said and said
    for a in advice:
        flags = a["flags"].split()
        gpus = [] if "--gpus" in flags else ["--gpus", "8"]
        again = json.loads(_train("-m", "70b", "--tp", "8", "--zero", "3", *gpus, *flags,
                                  "--json"))  # fmt: skip
        assert again["fits"] is True and again["fit_advice"] == []
        assert again["memory_per_rank_bytes"]["total"] == a["peak_bytes_per_device"]
