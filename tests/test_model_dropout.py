"""A trained model's config dropout on the RL side (rlmcost.placement.model_dropout,
rlmcost.specs.hf_dropout, ``TrainLayout.disable_dropout``).

Sources: transformers ``GPT2Config`` (resid_pdrop, attn_pdrop 0.1) and ``modeling_gpt2.py``
(``GPT2MLP.dropout`` after ``c_proj``); the RL trainers' ``model.train()`` before their update
loops and ``model.eval()`` for their forwards; TRL ``disable_dropout`` (PR 3234, v0.17.0). The
independent check: torch's FLOP counter over the backward of a transformers ``GPT2Block``
under ``torch.utils.checkpoint(use_reentrant=False)``, in training and in eval mode.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.spec import Deployment, TrainLayout
from rlmcost.errors import SpecError
from rlmcost.frameworks.trl import import_trl
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.perf.ckpt_early_stop import (
    LATE_STOP_NOTE,
    skipped_flops_per_token,
    skips_down_projection,
)
from rlmcost.perf.step_pass import StepOptions
from rlmcost.perf.train_step import train_step_time
from rlmcost.placement.model_dropout import DISABLED_NOTE, dropout_note, trains_with_dropout
from rlmcost.specs import get_hardware, get_model
from rlmcost.specs.hf_config import load_config

D, FF, H, T = 64, 256, 4, 32  # the toy GPT-2 block: width, FFN, heads, tokens
runner = CliRunner()


def _gpt2_rerun_flops(train: bool, early: bool) -> int:
    """Backward FLOPs of a transformers GPT2Block (resid_pdrop = attn_pdrop = 0.1) under the
    non-reentrant checkpoint, in training (dropout on) or eval mode."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    cfg = GPT2Config(n_embd=D, n_head=H, n_inner=FF, n_positions=T, resid_pdrop=0.1,
                     attn_pdrop=0.1, attn_implementation="eager")  # fmt: skip
    torch.manual_seed(0)
    block = GPT2Block(cfg, layer_idx=0)
    block.train(train)
    x = torch.randn(1, T, D, requires_grad=True)

    def run(h):  # noqa: ANN001, ANN202
        out = block(h)
        return out[0] if isinstance(out, tuple) else out

    with set_checkpoint_early_stop(early):
        y = checkpoint(run, x, use_reentrant=False)
        with FlopCounterMode(display=False) as counter:
            y.sum().backward()
    return int(counter.get_total_flops())


def test_torch_reruns_the_down_projection_under_dropout() -> None:
    """In eval mode the early stop leaves the MLP's c_proj out of the rerun (2 T d_ff d);
    in training its dropout saves a mask after c_proj, so nothing the FLOP counter sees is
    left out: the rerun runs through the projection, as rlmcost prices it."""
    eval_skip = _gpt2_rerun_flops(False, False) - _gpt2_rerun_flops(False, True)
    train_skip = _gpt2_rerun_flops(True, False) - _gpt2_rerun_flops(True, True)
    assert eval_skip == 2 * T * FF * D and train_skip == 0
    gpt2 = get_model("gpt-2").arch()
    assert skips_down_projection(gpt2, StepOptions(recompute_early_stop=True))
    assert not skips_down_projection(gpt2, StepOptions(recompute_early_stop=True,
                                                         hidden_dropout=True))
    lay = Layout(dp=8, zero=ZeroStage.OS_G_P, micro_batch=1, ckpt=Checkpointing.FULL)
    on, off = (train_step_time(gpt2, lay, 64, 1024, get_hardware("h100-sxm"),
                               options=StepOptions(recompute_early_stop=True, hidden_dropout=drop))
               for drop in (True, False))  # fmt: skip
    assert on.hardware_flops - off.hardware_flops == \
        12 * skipped_flops_per_token(gpt2, 1) * 64 * 1024  # fmt: skip


def test_config_json_dropout(tmp_path: Path) -> None:
    base = {"model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12,
            "vocab_size": 50257, "n_positions": 1024}  # fmt: skip
    p = tmp_path / "config.json"
    p.write_text(json.dumps(base))  # GPT2Config's defaults: 0.1
    spec = load_config(p)
    assert (spec.hidden_dropout, spec.attention_dropout) == (0.1, 0.1)
    p.write_text(json.dumps({**base, "resid_pdrop": 0.0, "attn_pdrop": 0.0}))
    assert load_config(p).hidden_dropout == 0.0
    p.write_text(json.dumps({**base, "resid_pdrop": 1.5}))
    with pytest.raises(SpecError, match="resid_pdrop"):
        load_config(p)
    assert get_model("gpt-2").hidden_dropout == 0.1  # openai-community/gpt2 config.json
    assert get_model("llama-3.1-8b").hidden_dropout == 0.0


def test_which_trainers_run_it() -> None:
    gpt2 = get_model("gpt-2")
    hf = Deployment(framework="verl", train=TrainLayout(zero="3"))
    assert trains_with_dropout(hf, gpt2)
    assert trains_with_dropout(Deployment(), gpt2)  # no framework: the config's
    assert not trains_with_dropout(Deployment(ideal=True), gpt2)  # the paper's run
    assert not trains_with_dropout(Deployment(framework="nemo-rl",
                                              train=TrainLayout(zero="1", tp=2)), gpt2)
    off = Deployment(framework="trl", train=TrainLayout(disable_dropout=True))
    assert not trains_with_dropout(off, gpt2)
    assert dropout_note(off, gpt2) == DISABLED_NOTE.format(model="gpt-2", hidden=0.1,
                                                           attention=0.1)  # fmt: skip
    assert not trains_with_dropout(hf, get_model("llama-3.1-8b"))


def _run(*extra: str) -> dict:
    res = runner.invoke(app, ["grpo", "-m", "gpt-2", "--framework", "verl", "--gpus", "8",
                              "--ckpt", "full", "--json", *extra])  # fmt: skip
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_rl_query_prices_the_training_steps_only() -> None:
    on, off = _run(), _run("--disable-dropout")
    t_on, t_off = ({p["name"]: p["time_s"] for p in o["phases"]} for o in (on, off))
    assert t_on["update actor"] > t_off["update actor"]
    assert t_on["old log-prob"] == t_off["old log-prob"]  # eval mode: no dropout
    assert LATE_STOP_NOTE in on["notes"] and LATE_STOP_NOTE not in off["notes"]
    assert any("gpt-2's dropout" in n for n in on["notes"])


def test_trl_disable_dropout_is_read(tmp_path: Path) -> None:
    cfg = tmp_path / "grpo.yaml"
    cfg.write_text("model_name_or_path: gpt2\nper_device_train_batch_size: 8\n"
                   "num_generations: 8\ndisable_dropout: true\n")  # fmt: skip
    assert "--disable-dropout" in dict(import_trl(cfg).flags)
    old = import_trl(cfg, version="0.16.0")  # before PR 3234: dropped by TRL's parser
    assert "--disable-dropout" not in dict(old.flags)
    assert any(n.startswith("disable_dropout dropped") for n in old.notes)


def test_the_fast_path_equals_the_plain_evaluation() -> None:
    """Deployments differing only in ``disable_dropout`` keep no estimate for each other (the
    trainer layout keys ``placement.group_key``; the per-role options ``group_passes``) and
    equal their plain evaluation, with and without full recomputation."""
    from fast_plain import fast_and_plain

    def variant(off: bool, ckpt: str):  # noqa: ANN202
        def edit(dep: dict) -> None:
            dep.update(framework="verl")
            dep["train"].update(zero="3", ckpt=ckpt, disable_dropout=off)
            dep["forward"].update(zero="3", ckpt=ckpt)
        return edit

    fast, plain = fast_and_plain([variant(o, c) for o in (False, True) for c in ("full", "none")],
                                 model="gpt-2")  # fmt: skip
    assert fast == plain and len(set(fast)) == 4
