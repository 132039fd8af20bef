"""A LoRA adapter on a projection makes torch's checkpoint early stop rerun its base GEMM
(rlmcost.perf.ckpt_early_stop, ``StepOptions.peft_lora``).

Source: PEFT's ``lora.Linear.forward`` (``peft/tuners/lora/layer.py``) computes the frozen
``base_layer(x)`` first and then ``lora_B(lora_A(dropout(x))) * scaling``; ``lora_B`` saves its
input after the base GEMM has run, so the rerun of a checkpointed layer ends before ``lora_B``,
not before the base down projection. The independent check: torch's FLOP counter over the
backward of a Llama-style block with and without the adapter, early stop on and off."""

from __future__ import annotations

import json

import pytest
from fast_plain import fast_and_plain
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.spec import Deployment, LoraSpec, TrainLayout
from rlmcost.perf.ckpt_early_stop import (
    EARLY_STOP_NOTE,
    LORA_STOP_NOTE,
    lora_rerun_note,
    skips_down_projection,
)
from rlmcost.perf.module_ckpt import module_skipped_flops_per_token
from rlmcost.perf.step_pass import StepOptions
from rlmcost.placement.pass_options import step_options
from rlmcost.specs import get_model

D, FF, T, R = 64, 256, 32, 4  # width, FFN width, tokens, adapter rank

runner = CliRunner()


def _skipped_by_early_stop(lora: bool) -> int:
    """Backward FLOPs the early stop saves on a checkpointed gated FFN block (residual
    included) whose down projection carries a PEFT-style adapter when ``lora``."""
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop
    from torch.utils.flop_counter import FlopCounterMode

    nn, F = torch.nn, torch.nn.functional

    class Lora(nn.Module):  # peft lora.Linear: base_layer(x) + lora_B(lora_A(x)) * scaling
        def __init__(self, i: int, o: int) -> None:
            super().__init__()
            self.base_layer = nn.Linear(i, o, bias=False).requires_grad_(False)
            self.lora_A, self.lora_B = nn.Linear(i, R, bias=False), nn.Linear(R, o, bias=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.base_layer(x) + self.lora_B(self.lora_A(x)) * 2.0

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gate, self.up = nn.Linear(D, FF, bias=False), nn.Linear(D, FF, bias=False)
            self.down = Lora(FF, D) if lora else nn.Linear(FF, D, bias=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + self.down(F.silu(self.gate(x)) * self.up(x))

    block, x = Block(), torch.randn(1, T, D, requires_grad=True)

    def flops(early: bool) -> int:
        with set_checkpoint_early_stop(early):
            y = checkpoint(block, x, use_reentrant=False)
            with FlopCounterMode(display=False) as counter:
                y.sum().backward()
        return int(counter.get_total_flops())

    return flops(False) - flops(True)


def test_torch_reruns_the_base_down_projection_under_an_adapter() -> None:
    """Without the adapter the early stop saves the down projection's GEMM; with it, only the
    adapter's rank-R B GEMM (the base GEMM runs again), as rlmcost prices it."""
    assert _skipped_by_early_stop(False) == 2 * T * FF * D
    assert _skipped_by_early_stop(True) == 2 * T * R * D
    arch = get_model("llama-3.1-8b").arch()
    assert skips_down_projection(arch, StepOptions(recompute_early_stop=True))
    lora = StepOptions(recompute_early_stop=True, peft_lora=("q", "v", "down"))
    assert not skips_down_projection(arch, lora)


def test_per_module_rerun_keeps_the_adapted_projections() -> None:
    """NeMo RL's per-module checkpoint skips o_proj and down_proj; an adapter on either keeps
    its base GEMM in the rerun (the same saving order)."""
    arch = get_model("llama-3.1-8b").arch()
    d, n = int(arch.d_model), int(arch.n_layers)
    o, down = 2 * d * int(arch.v_width) * n, 2 * d * int(arch.d_ff) * n
    on = StepOptions(module_ckpt=True, recompute_early_stop=True)
    assert module_skipped_flops_per_token(arch, on) == o + down
    cases = ((("o",), down), (("down",), o), (("o", "down"), 0), (("q", "v"), o + down))
    for targets, left in cases:
        opts = StepOptions(module_ckpt=True, recompute_early_stop=True, peft_lora=targets)
        assert module_skipped_flops_per_token(arch, opts) == left


def test_step_options_carry_the_adapters_only_under_the_early_stop() -> None:
    lora = LoraSpec(rank=16, targets="q,v,down")
    on = step_options(Deployment(framework="verl", lora=lora, train=TrainLayout(ckpt="full")))
    assert on is not None and on.peft_lora == ("q", "v", "down")
    off = Deployment(framework="verl", lora=lora,
                     train=TrainLayout(ckpt="full", recompute_early_stop=False))
    assert (step_options(off) or StepOptions()).peft_lora == ()


def _update(targets: str | None) -> tuple[float, list[str]]:
    args = ["grpo", "-m", "llama-3.2-1b", "--framework", "verl", "--gpus", "8", "--ckpt",
            "full", "--json"]
    args += ["--lora-rank", "16", "--lora-targets", targets] if targets else []
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    return {p["name"]: p["time_s"] for p in out["phases"]}["update actor"], out["notes"]


def test_an_rl_query_with_an_adapter_on_the_down_projection_prices_and_notes_it() -> None:
    """verl's FSDP worker with LoRA on every linear layer (the down projection included) reruns
    the down projection's base GEMM: slower than with adapters on q and v alone, and noted."""
    qv, notes_qv = _update("q,v")
    down, notes_down = _update("all-linear")
    assert down > qv
    assert EARLY_STOP_NOTE in notes_qv and LORA_STOP_NOTE not in notes_qv
    assert LORA_STOP_NOTE in notes_down and EARLY_STOP_NOTE not in notes_down


def test_the_fast_path_keys_on_the_adapters() -> None:
    """Deployments differing only in their adapters' targets keep no notes or passes for each
    other: the fast evaluation equals the plain one."""

    def variant(targets: str | None):
        def edit(dep: dict) -> None:
            dep.update(framework="verl", lora={"rank": 16, "targets": targets} if targets else None)
            for layout in ("train", "forward"):
                dep[layout].update(zero="3", ckpt="full")
        return edit

    fast, plain = fast_and_plain([variant(t) for t in ("q,v", "all-linear", None)])
    assert fast == plain and len(set(fast)) == 3


def test_nemo_rls_per_module_rerun_notes_the_adapted_projections() -> None:
    """Under NeMo RL's per-module checkpoint, all-linear adapters keep o_proj and down_proj in
    the rerun, and the output says which."""
    args = ["grpo", "-m", "llama-3.2-1b", "--framework", "nemo-rl", "--gpus", "8", "--ckpt",
            "full", "--module-ckpt", "--lora-rank", "8", "--json"]  # the v1 worker's modules
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert lora_rerun_note(["o", "down"]) in json.loads(result.stdout)["notes"]
