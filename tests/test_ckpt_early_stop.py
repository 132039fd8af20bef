"""Full recomputation under PyTorch's non-reentrant checkpoint stops before the down projection
(rlmcost.perf.ckpt_early_stop).

The independent check: torch's own FLOP counter over the backward of a checkpointed MPT block
(LayerNorm, biased projections, GELU: llmfoundry/models/layers/blocks.py @061f2c7ce) and a Llama
block (RMSNorm, gated SiLU FFN) with the early stop on (torch's default since pytorch/pytorch
PR 96866) and off: the difference is the down-projection GEMM rlmcost leaves out."""

from __future__ import annotations

import copy

import pytest

from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.perf.ckpt_early_stop import (
    EARLY_STOP_NOTE,
    LATE_STOP_NOTE,
    NO_DENSE_NOTE,
    skipped_flops_per_token,
)
from rlmcost.perf.train_step import StepOptions, train_step_time
from rlmcost.perf.validate import gpt_arch, load_table, predict_row
from rlmcost.specs import get_hardware, get_model

D, FF, T, HEADS = 64, 256, 32, 4  # the toy block's width, FFN width (4 d), tokens, heads


def _recomputed_flops(block, early_stop: bool) -> int:
    """FLOPs the checkpointed backward runs beyond the plain backward of ``block``."""
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.randn(1, T, D, requires_grad=True)

    def backward_flops(ckpt: bool) -> int:
        with set_checkpoint_early_stop(early_stop):
            y = checkpoint(block, x, use_reentrant=False) if ckpt else block(x)
            with FlopCounterMode(display=False) as counter:
                y.sum().backward()
        return int(counter.get_total_flops())

    return backward_flops(True) - backward_flops(False)


def _blocks():
    torch = pytest.importorskip("torch")
    nn, F = torch.nn, torch.nn.functional

    def attend(qkv: torch.Tensor) -> torch.Tensor:
        q, k, v = qkv.view(1, T, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(
            1, T, D)  # fmt: skip

    class Mpt(nn.Module):  # MPTBlock: x + attn(norm_1(x)); x + down(gelu(up(norm_2(x))))
        def __init__(self) -> None:
            super().__init__()
            self.n1, self.n2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.wqkv, self.out = nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.up, self.down = nn.Linear(D, FF), nn.Linear(FF, D)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = x + self.out(attend(self.wqkv(self.n1(x))))
            return x + self.down(F.gelu(self.up(self.n2(x))))

    class Llama(nn.Module):  # LlamaDecoderLayer: down(silu(gate(x)) * up(x))
        def __init__(self) -> None:
            super().__init__()
            self.n1, self.n2 = nn.RMSNorm(D), nn.RMSNorm(D)
            self.wqkv, self.out = nn.Linear(D, 3 * D, bias=False), nn.Linear(D, D, bias=False)
            self.gate, self.up = nn.Linear(D, FF, bias=False), nn.Linear(D, FF, bias=False)
            self.down = nn.Linear(FF, D, bias=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = x + self.out(attend(self.wqkv(self.n1(x))))
            m = self.n2(x)
            return x + self.down(F.silu(self.gate(m)) * self.up(m))

    class Dropped(Mpt):  # a hidden dropout after the down projection saves its mask last
        def __init__(self) -> None:
            super().__init__()
            self.drop = nn.Dropout(0.1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = x + self.out(attend(self.wqkv(self.n1(x))))
            return x + self.drop(self.down(F.gelu(self.up(self.n2(x)))))

    class Gemma(Llama):  # Gemma2DecoderLayer: post_feedforward_layernorm before the residual
        def __init__(self) -> None:
            super().__init__()
            self.post = nn.RMSNorm(D)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = x + self.out(attend(self.wqkv(self.n1(x))))
            m = self.n2(x)
            return x + self.post(self.down(F.gelu(self.gate(m)) * self.up(m)))

    return {"mpt": Mpt(), "llama": Llama(), "dropout": Dropped(), "post-norm": Gemma()}


@pytest.mark.parametrize("kind", ["mpt", "llama"])
def test_torch_early_stop_skips_exactly_the_down_projection(kind):
    block = _blocks()[kind]
    full, early = _recomputed_flops(block, False), _recomputed_flops(block, True)
    arch = gpt_arch(1, D, HEADS, 128, T)  # d_ff = 4 d, as the toy blocks
    assert full - early == T * skipped_flops_per_token(arch, 1) == 2 * T * D * FF
    assert early > 0  # the rest of the forward is rerun


@pytest.mark.parametrize("kind", ["dropout", "post-norm"])
def test_torch_early_stop_reruns_the_down_projection_when_an_op_after_it_saves(kind):
    # the dropout's mask (an output, saved after its kernel) or the post-FFN norm's input (the
    # down projection's output) is the last saved tensor: the GEMM runs again
    block = _blocks()[kind]
    assert _recomputed_flops(block, False) == _recomputed_flops(block, True) > 2 * T * D * FF


def _mpt_13b(early_stop: bool, ckpt: Checkpointing = Checkpointing.FULL, dropout: bool = False,
             arch=None):  # fmt: skip
    arch = arch or gpt_arch(40, 5120, 40, 50368, 4096)  # MPT-13B (llm_foundry_a100's 13b-s4096)
    layout = Layout(dp=8, zero=ZeroStage.OS_G_P, micro_batch=10, ckpt=ckpt)
    opts = StepOptions(recompute_early_stop=early_stop, hidden_dropout=dropout)
    return train_step_time(arch, layout, 240, 4096, get_hardware("a100-80gb"), options=opts)


@pytest.mark.parametrize("kind", ["dropout", "post-norm"])
def test_early_stop_skips_only_the_residual_add_after_a_saving_op(kind):
    arch = get_model("gemma-2-2b").arch() if kind == "post-norm" else None  # norms_per_layer 4
    dropout = kind == "dropout"
    off, on = (_mpt_13b(on, dropout=dropout, arch=arch) for on in (False, True))
    assert on.hardware_flops == off.hardware_flops and on.model_flops == off.model_flops
    saved = off.compute_s["recompute"] - on.compute_s["recompute"]
    assert 0 < saved < 0.02 * off.compute_s["recompute"]  # the add, not a third of the GEMMs
    assert LATE_STOP_NOTE in on.notes and EARLY_STOP_NOTE not in on.notes
    assert EARLY_STOP_NOTE in _mpt_13b(True).notes


def test_early_stop_takes_the_down_projections_off_the_recomputed_flops():
    off, on = _mpt_13b(False), _mpt_13b(True)
    arch = gpt_arch(40, 5120, 40, 50368, 4096)
    assert off.hardware_flops - on.hardware_flops == 40 * 2 * 5120 * 20480 * 240 * 4096
    assert on.model_flops == off.model_flops  # the model's FLOPs do not change
    # a third of the layers' forward GEMMs (4 d^2 of 12 d^2) leaves the recompute part
    gemm_fwd = off.compute_s["gemm"] / 3
    saved = off.compute_s["recompute"] - on.compute_s["recompute"]
    assert 0.3 * gemm_fwd < saved < 0.36 * gemm_fwd
    assert on.step_s < off.step_s and on.step_s >= on.roofline_bound_s
    assert skipped_flops_per_token(arch, 1) == 2 * 5120 * 20480


def test_early_stop_changes_nothing_without_full_recompute_or_on_moe_layers():
    assert _mpt_13b(True, Checkpointing.NONE).step_s == _mpt_13b(False, Checkpointing.NONE).step_s
    arch = get_model("qwen3-30b-a3b").arch()  # every layer MoE: its combine saves last
    layout = Layout(dp=8, ep=8, zero=ZeroStage.OS_G_P, micro_batch=1, ckpt=Checkpointing.FULL)
    h100 = get_hardware("h100-sxm")
    runs = [train_step_time(arch, layout, 64, 4096, h100, options=StepOptions(
        recompute_early_stop=on)) for on in (False, True)]  # fmt: skip
    assert runs[0].step_s == runs[1].step_s and runs[0].hardware_flops == runs[1].hardware_flops
    # and the note says so (it said the down projection was not recomputed)
    assert NO_DENSE_NOTE in runs[1].notes and EARLY_STOP_NOTE not in runs[1].notes


def test_llm_foundry_rows_run_the_non_reentrant_checkpoint():
    # scripts/train/yamls/pretrain/mpt-*.yaml @061f2c7ce: activation_checkpointing_reentrant
    # false; Megatron's rows (its reentrant CheckpointFunction) rerun the whole forward
    for r in load_table()["rows"]:
        early = r["options"].get("recompute_early_stop", False)
        assert early is r["source"].startswith("llm_foundry"), r["id"]


def test_a100_recompute_rows_move_up_by_the_skipped_gemm():
    # llm-foundry's A100 table (README @061f2c7ce): the three full-recompute rows were -6.5 to
    # -10.4 % with the whole forward rerun, against +1.2 to +3.6 % for the rows without
    by_id = {r["id"]: r for r in load_table()["rows"]}
    for size in ("7b", "13b"):
        rid = f"llm-foundry-a100-80gb-mpt-{size}-s4096-8gpu"
        row = by_id[rid]
        whole = copy.deepcopy(row)
        whole["options"]["recompute_early_stop"] = False
        assert predict_row(whole).error + 0.05 < predict_row(row).error


def test_cli_flag_needs_full_recomputation():
    import json

    from typer.testing import CliRunner

    from rlmcost.cli import app

    runner, base = CliRunner(), ["train", "-m", "llama-3.1-8b", "--gpus", "8", "--json"]
    for ckpt in ([], ["--ckpt", "none"], ["--ckpt", "selective"]):  # nothing to stop: an error
        bad = runner.invoke(app, [*base, *ckpt, "--recompute-early-stop"])
        assert bad.exit_code == 2 and "Traceback" not in bad.output, bad.output
        assert bad.output.strip().startswith("error: --recompute-early-stop")
    runs = [runner.invoke(app, [*base, "--ckpt", "full", *flag])
            for flag in ([], ["--recompute-early-stop"])]  # fmt: skip
    off, on = (json.loads(r.stdout) for r in runs)
    assert EARLY_STOP_NOTE in on["notes"] and EARLY_STOP_NOTE not in off["notes"]
    assert on["step_time_s"] < off["step_time_s"]
