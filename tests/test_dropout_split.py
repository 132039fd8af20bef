"""Attention and hidden dropout apart (rlmcost.perf.dropout, ``StepOptions.attention_dropout``,
``hidden_dropout``, ``dropout_add_fused``; the RL side's rlmcost.placement.model_dropout).

Independent sources: torch's autograd graph (the tensors a transformers ``OPTDecoderLayer`` /
``Phi3DecoderLayer`` built from its config saves in training mode, ``nn.functional.dropout``
routed to ATen's ``native_dropout`` as ``aten/src/ATen/native/Dropout.cpp`` ``dropout`` does for
CUDA inputs) and torch's FLOP counter over the non-reentrant checkpoint's rerun; transformers'
``OPTConfig`` defaults (dropout 0.1, attention_dropout 0.0); DeepSpeedExamples e468799f
``training/utils/model/model_utils.py`` ``create_hf_model`` (``model_config.dropout = 0.0``).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.spec import Deployment, TrainLayout
from rlmcost.parallel.breakdown import data_share
from rlmcost.parallel.layout import Layout
from rlmcost.perf.ckpt_early_stop import skips_down_projection
from rlmcost.perf.dropout import (
    HIDDEN_DROPOUTS_PER_LAYER,
    MASK_BYTES,
    attention_dropout_bytes,
    eager_hidden_dropout_bytes,
)
from rlmcost.perf.efficiency import Device
from rlmcost.perf.step_pass import AttentionKernel, StepContext, StepOptions, _layer
from rlmcost.placement.model_dropout import (
    ATTENTION_PART,
    DISABLED_NOTE,
    HIDDEN_PART,
    dropout_note,
    train_dropout,
)
from rlmcost.specs import Workload, get_hardware, get_model

D, FF, H, T = 64, 256, 4, 32  # the toy layers: width, FFN, heads, tokens (batch 1)
runner = CliRunner()


@pytest.fixture
def native_dropout(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201 - torch
    """``nn.functional.dropout`` as CUDA runs it: ATen's ``native_dropout`` (a ``bool`` mask
    saved); on CPU ATen multiplies by a float noise tensor instead."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")

    def dropout(x, p=0.5, training=True, inplace=False):  # noqa: ANN001, ANN202, ARG001
        return torch.native_dropout(x, p, training)[0] if training and p > 0 else x

    monkeypatch.setattr(torch.nn.functional, "dropout", dropout)
    return torch


def _opt_layer(torch, hidden: float, attention: float):  # noqa: ANN001, ANN202
    from transformers import OPTConfig
    from transformers.models.opt.modeling_opt import OPTDecoderLayer

    cfg = OPTConfig(hidden_size=D, ffn_dim=FF, num_attention_heads=H, dropout=hidden,
                    attention_dropout=attention, max_position_embeddings=T,
                    attn_implementation="eager")  # fmt: skip
    torch.manual_seed(0)
    return OPTDecoderLayer(cfg, layer_idx=0).train()


def _saved_masks(torch, run) -> list[tuple[int, ...]]:  # noqa: ANN001
    """Shapes of the ``bool`` tensors autograd saves while ``run()`` runs forward."""
    saved: list = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        run()
    return [tuple(t.shape) for t in saved if t.dtype == torch.bool]


def _first(out):  # noqa: ANN001, ANN202
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize(("hidden", "attention"), [(0.1, 0.0), (0.0, 0.1), (0.1, 0.1)])
def test_opt_layer_saves_one_byte_masks_where_each_dropout_acts(
    native_dropout, hidden: float, attention: float
) -> None:
    torch = native_dropout
    layer = _opt_layer(torch, hidden, attention)
    x = torch.randn(1, T, D, requires_grad=True)
    masks = _saved_masks(torch, lambda: layer(x))
    hidden_masks = [m for m in masks if m[-1] == D]
    attention_masks = [m for m in masks if m[-1] == T and len(m) == 4]
    # two hidden masks of T x d elements (HIDDEN_DROPOUTS_PER_LAYER), one byte each
    assert sum(torch.Size(m).numel() for m in hidden_masks) == \
        (HIDDEN_DROPOUTS_PER_LAYER * T * D if hidden else 0)  # fmt: skip
    # eager attention: one mask over the b h s^2 probabilities, as attention_dropout_bytes
    # counts its mask (MASK_BYTES per score)
    scores = H * T * T
    assert sum(torch.Size(m).numel() for m in attention_masks) == (scores if attention else 0)
    assert attention_dropout_bytes(scores, 2) - 2 * 2 * scores == MASK_BYTES * scores


def test_native_dropout_moves_2x_plus_1_bytes_each_way(native_dropout) -> None:
    """Forward: read x, write the output and a bool mask; the backward node saves the mask alone
    (derivatives.yaml: native_dropout_backward(grad, result1, scale)), so it reads the gradient
    and the mask and writes the input's gradient: 2 x + 1 bytes per element each way."""
    torch = native_dropout
    x = torch.randn(T, D, dtype=torch.float16, requires_grad=True)
    y, mask = torch.native_dropout(x, 0.1, True)
    per_element = x.element_size() + y.element_size() + mask.element_size()
    assert y.grad_fn._saved_result1.dtype == torch.bool
    assert eager_hidden_dropout_bytes(T, D, 2) == (HIDDEN_DROPOUTS_PER_LAYER * T * D * per_element,
                                                   HIDDEN_DROPOUTS_PER_LAYER)  # fmt: skip


def test_phi3_layer_has_hidden_dropout_only(native_dropout) -> None:
    torch = native_dropout
    from transformers import Phi3Config
    from transformers.models.phi3.modeling_phi3 import Phi3DecoderLayer, Phi3RotaryEmbedding

    cfg = Phi3Config(hidden_size=D, intermediate_size=FF, num_attention_heads=H,
                     num_key_value_heads=H, resid_pdrop=0.1, attention_dropout=0.0,
                     max_position_embeddings=T, attn_implementation="eager")  # fmt: skip
    layer = Phi3DecoderLayer(cfg, layer_idx=0).train()
    x = torch.randn(1, T, D, requires_grad=True)
    pos = torch.arange(T)[None]
    rope = Phi3RotaryEmbedding(cfg)(x, pos)
    masks = _saved_masks(torch, lambda: layer(x, position_ids=pos, position_embeddings=rope))
    assert masks == [(1, T, D)] * HIDDEN_DROPOUTS_PER_LAYER


def _rerun_flops(torch, hidden: float, attention: float, early: bool) -> int:  # noqa: ANN001
    from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop
    from torch.utils.flop_counter import FlopCounterMode

    layer = _opt_layer(torch, hidden, attention)
    x = torch.randn(1, T, D, requires_grad=True)
    with set_checkpoint_early_stop(early):
        y = checkpoint(lambda h: _first(layer(h)), x, use_reentrant=False)
        with FlopCounterMode(display=False) as counter:
            y.sum().backward()
    return int(counter.get_total_flops())


def test_attention_dropout_leaves_the_early_stop_alone(native_dropout) -> None:
    """The early stop skips fc2's rerun (2 T d_ff d) with the attention dropout alone; the hidden
    dropout's mask, saved after fc2, puts it back: as skips_down_projection says."""
    torch = native_dropout
    skip = {k: _rerun_flops(torch, *k, False) - _rerun_flops(torch, *k, True)
            for k in ((0.0, 0.1), (0.1, 0.0))}  # fmt: skip
    assert skip == {(0.0, 0.1): 2 * T * FF * D, (0.1, 0.0): 0}
    arch = get_model("llama-3.1-8b").arch()
    early = StepOptions(recompute_early_stop=True)
    assert skips_down_projection(arch, replace(early, attention_dropout=True))
    assert not skips_down_projection(arch, replace(early, hidden_dropout=True))


def _pass(options: StepOptions, hardware: str = "a100-80gb"):  # noqa: ANN202 - StagePass
    arch, lay = get_model("llama-3.1-8b").arch(), Layout()
    dev = Device(get_hardware(hardware))
    c = StepContext.of(arch, lay, 2048, data_share(lay, 2, 2048), dev, options, Workload())
    return _layer(c, False), c


def test_each_dropout_is_priced_where_it_acts() -> None:
    base, c = _pass(StepOptions())
    # the attention dropout: FlashAttention-2 (A100) draws it in-kernel, nothing else moves
    att, _ = _pass(StepOptions(attention_dropout=True))
    assert (att.fwd, att.bwd) == (base.fwd, base.bwd)
    # on Hopper a pre-FA3 kernel: the attention alone moves
    h_base, _ = _pass(StepOptions(), "h100-sxm")
    h_att, _ = _pass(StepOptions(attention_dropout=True), "h100-sxm")
    assert h_att.fwd["attention"] > h_base.fwd["attention"]
    assert h_att.fwd["elementwise"] == h_base.fwd["elementwise"]
    # materialized scores: a dropout kernel over them each way
    mat = StepOptions(attention=AttentionKernel.MATERIALIZED)
    m_base, _ = _pass(mat)
    m_att, _ = _pass(replace(mat, attention_dropout=True))
    scores = c.micro_batch * 32 * 2048 * 2048  # b h s^2
    assert m_att.fwd["attention"] - m_base.fwd["attention"] == pytest.approx(
        c.device.elementwise_s(attention_dropout_bytes(scores, 2)), rel=1e-9)
    # the hidden dropout fused into the adds (Megatron): its masks' byte, no kernel
    fused, _ = _pass(StepOptions(hidden_dropout=True))
    masks = 2 * c.tokens * 4096  # two adds, T x d, one byte
    assert fused.fwd["elementwise"] - base.fwd["elementwise"] == pytest.approx(
        c.device.memory_s(masks), rel=1e-9)
    assert fused.fwd["attention"] == base.fwd["attention"]
    # a Hugging Face model's own kernels: 2 x + 1 bytes per element each way, two kernels
    eager, _ = _pass(StepOptions(hidden_dropout=True, dropout_add_fused=False))
    moved, kernels = eager_hidden_dropout_bytes(c.tokens, 4096, 2)
    for side in ("fwd", "bwd"):
        extra = getattr(eager, side)["elementwise"] - getattr(base, side)["elementwise"]
        assert extra == pytest.approx(c.device.elementwise_s(moved, kernels), rel=1e-9)


def test_rl_side_reads_each_probability() -> None:
    hf = Deployment(framework="verl", train=TrainLayout(zero="3"))
    llama = get_model("llama-3.1-8b")
    phi = llama.model_copy(update={"name": "phi-like", "hidden_dropout": 0.1})
    att = llama.model_copy(update={"name": "att-only", "attention_dropout": 0.1})
    assert train_dropout(hf, phi) == (True, False)  # Phi-3: resid_pdrop, attention_dropout 0
    assert train_dropout(hf, att) == (False, True)
    assert train_dropout(hf, get_model("gpt-2")) == (True, True)
    note = dropout_note(hf, phi)
    assert note is not None and HIDDEN_PART in note and ATTENTION_PART not in note
    note = dropout_note(hf, att)
    assert note is not None and ATTENTION_PART in note and HIDDEN_PART not in note
    off = Deployment(framework="verl", train=TrainLayout(zero="3", disable_dropout=True))
    assert train_dropout(off, att) == (False, False)


def _actor_s(tmp_path: Path, cfg: dict, *extra: str) -> tuple[float, list[str]]:
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    res = runner.invoke(app, ["grpo", "-m", str(p), "-H", "h100-sxm", "--gpus", "8",
                              "--framework", "none", "--ckpt", "full", "--json",
                              *extra])  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    return {ph["name"]: ph["time_s"] for ph in out["phases"]}["update actor"], out["notes"]


def test_attention_dropout_alone_is_priced(tmp_path: Path) -> None:
    """A Llama config with attention_dropout 0.1 (no hidden dropout): with no framework's
    trainer (FA3-class attention) the attention takes a pre-FA3 kernel on Hopper."""
    cfg = {"model_type": "llama", "hidden_size": 1024, "intermediate_size": 4096,
           "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 8,
           "vocab_size": 32000, "max_position_embeddings": 4096,
           "attention_dropout": 0.1}  # fmt: skip
    on, notes = _actor_s(tmp_path, cfg)
    off, _ = _actor_s(tmp_path, cfg, "--disable-dropout")
    assert on > off
    assert any(ATTENTION_PART in n for n in notes)


def test_deepspeed_chat_rows_train_without_their_configs_dropout() -> None:
    """The OPT rows carry OPTConfig's dropout 0.1 (their model_config); DeepSpeed-Chat's
    release (e468799f) sets model_config.dropout = 0.0 in create_hf_model for every model, so
    the mapping gives --disable-dropout and the notes say so."""
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.evaluation.query import evaluate
    from rlmcost.reports.rl_runs import recipes
    from rlmcost.reports.rl_runs_rows import build_run

    rows = [r for r in recipes("deepspeed-chat") if r.query is not None]
    assert rows
    for r in rows:
        assert r.record["model_config"]["dropout"] == 0.1
        assert r.record["model_config"]["attention_dropout"] == 0.0
    run = build_run(rows[0], run_from_argv)
    actor = run.models.actor
    assert not isinstance(actor, str) and actor.hidden_dropout == 0.1
    assert run.deployment.train.disable_dropout
    ev = evaluate(run)
    note = DISABLED_NOTE.format(model=actor.name, hidden=0.1, attention=0.0)
    assert note in ev.notes


def test_hidden_masks_in_the_training_memory() -> None:
    """The masks the OPT / Phi-3 layers save above (2 d bytes per token and layer) held for
    every layer without recomputation, for the rebuilt layer alone under full recomputation,
    and for every layer under a per-module checkpoint when the dropout sits outside the
    modules (Phi-3's in the decoder layer; GPT-2's inside its modules are rerun)."""
    from rlmcost.parallel.layout import Checkpointing
    from rlmcost.placement.dropout_memory import hidden_mask_bytes

    gpt2 = get_model("gpt-2")  # 12 layers, d 768
    per_layer = HIDDEN_DROPOUTS_PER_LAYER * MASK_BYTES * 768 * 2 * 1024  # micro-batch 2 x 1024
    none, full = (Layout(micro_batch=2, ckpt=c) for c in (Checkpointing.NONE, Checkpointing.FULL))
    assert hidden_mask_bytes(gpt2, none, 4, 1024, False) == [12 * per_layer]
    assert hidden_mask_bytes(gpt2, full, 4, 1024, False) == [per_layer]
    assert hidden_mask_bytes(gpt2, full, 4, 1024, True) == [per_layer]  # rerun in the module
    phi = gpt2.model_copy(update={"model_type": "phi3"})
    assert hidden_mask_bytes(phi, full, 4, 1024, True) == [12 * per_layer]
    sp = Layout(micro_batch=2, tp=4, sp=True)  # d / P_t wide under SP
    assert hidden_mask_bytes(gpt2, sp, 4, 1024, False) == [12 * per_layer // 4]


def test_rl_training_memory_holds_the_masks() -> None:
    def training_bytes(*extra: str) -> int:
        res = runner.invoke(app, ["grpo", "-m", "gpt-2", "-H", "h100-sxm", "--gpus", "8",
                                  "--framework", "verl", "--ckpt", "none", "--json", *extra])
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout)["device_memory_bytes"]["training"]

    assert training_bytes() > training_bytes("--disable-dropout")
