"""NeMo RL's DTensor worker checkpoints each layer's modules apart (rlmcost.perf.module_ckpt,
rlmcost.placement.module_ckpt_memory).

Source: nemo_rl/models/dtensor/parallelize.py @7ea279abf, ``_parallelize_model`` lines 722-743:
``checkpoint_wrapper`` (torch's non-reentrant checkpoint) around each decoder layer's ``mlp``,
``self_attn``, ``input_layernorm`` and ``post_attention_layernorm``. The independent check:
a transformers ``LlamaDecoderLayer`` wrapped the same way, torch's FLOP counter over its
backward and the bytes of the tensors its autograd graph keeps alive after the forward."""

from __future__ import annotations

import gc
import json
from dataclasses import replace
from fractions import Fraction

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.compiled.arch import arch_numbers
from rlmcost.compiled.memory import memory_per_stage, saved_bytes
from rlmcost.deployment.spec import Deployment, TrainLayout
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.perf.module_ckpt import (
    MODULE_NOTE,
    MODULE_WHOLE_NOTE,
    module_skipped_flops_per_token,
)
from rlmcost.perf.step_pass import StepOptions
from rlmcost.perf.train_step import train_step_time
from rlmcost.placement.module_ckpt_memory import (
    kept_bytes_per_token_layer,
    module_ckpt_applies,
    module_peak_bytes_per_token,
    per_module_stages,
)
from rlmcost.placement.pass_options import step_options
from rlmcost.specs import get_hardware, get_model
from rlmcost.specs.workload import Workload

D, FF, H, KV, T = 64, 176, 4, 2, 32  # the toy Llama layer: width, FFN, heads, KV heads, tokens
LLAMA = get_model("llama-3.1-8b").arch()
TOY = LLAMA.with_(n_layers=1, d_model=D, d_ff=FF, n_heads=H, n_kv_heads=KV, head_dim=D // H,
                  vocab=128)  # fmt: skip
ON = StepOptions(module_ckpt=True, recompute_early_stop=True)


def _layer(mode: str, dtype):
    """A transformers Llama decoder layer: plain, checkpointed whole, or per module as
    parallelize.py wraps it."""
    pytest.importorskip("transformers")
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

    cfg = LlamaConfig(hidden_size=D, intermediate_size=FF, num_attention_heads=H,
                      num_key_value_heads=KV, head_dim=D // H, attn_implementation="sdpa")
    layer = LlamaDecoderLayer(cfg, 0).to(dtype)
    if mode == "modules":  # parallelize.py @7ea279abf, lines 722-743
        layer.mlp = checkpoint_wrapper(layer.mlp)
        layer.self_attn = checkpoint_wrapper(layer.self_attn)
        layer.input_layernorm = checkpoint_wrapper(layer.input_layernorm)
        layer.post_attention_layernorm = checkpoint_wrapper(layer.post_attention_layernorm)
    elif mode == "layer":
        layer = checkpoint_wrapper(layer)
    return layer, LlamaRotaryEmbedding(cfg)


def _forward(layer, rope, x):
    import torch

    pos = torch.arange(T)[None]
    out = layer(x, position_embeddings=rope(x, pos), position_ids=pos)
    return out[0] if isinstance(out, tuple) else out


def _backward_flops(mode: str, early: bool) -> int:
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import set_checkpoint_early_stop
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    layer, rope = _layer(mode, torch.float32)
    x = torch.randn(1, T, D, requires_grad=True)
    with set_checkpoint_early_stop(early):
        y = _forward(layer, rope, x)
        with FlopCounterMode(display=False) as counter:
            y.sum().backward()
    return int(counter.get_total_flops())


def test_torch_reruns_each_module_up_to_its_output_projection():
    plain = _backward_flops("none", True)  # the backward alone: 2 x the forward's GEMMs
    forward = plain // 2
    o_proj, down = 2 * T * D * D, 2 * T * D * FF
    # per module, early stop (torch's default): neither o_proj nor down_proj reruns
    assert _backward_flops("modules", True) - plain == forward - o_proj - down
    assert T * module_skipped_flops_per_token(TOY, ON) == o_proj + down
    # the whole layer (verl, OpenRLHF, TRL): only the down projection is left out
    assert _backward_flops("layer", True) - plain == forward - down
    # early stop off: every module whole (the residual adds are no FLOPs)
    assert _backward_flops("modules", False) - plain == forward
    assert module_skipped_flops_per_token(TOY, replace(ON, recompute_early_stop=False)) == 0


def _kept_bytes(mode: str) -> int:
    """Bytes of the storages the layer's forward made that are still alive once only its
    output is referenced: what the autograd graph keeps for the backward (bf16)."""
    torch = pytest.importorskip("torch")
    from torch.multiprocessing.reductions import StorageWeakRef
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    made: list = []

    class Track(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in tree_leaves(out):
                if isinstance(t, torch.Tensor):
                    s = t.untyped_storage()
                    made.append((StorageWeakRef(s), s.nbytes(), s.data_ptr()))
            return out

    torch.manual_seed(0)
    layer, rope = _layer(mode, torch.bfloat16)
    x0 = torch.randn(1, T, D, dtype=torch.bfloat16, requires_grad=True)
    pos = torch.arange(T)[None]
    cos, sin = rope(x0, pos)  # one pair every layer shares: not the layer's
    with Track():
        x = x0 * 1.0  # the layer's input, made by an op (a previous layer's output)
        y = layer(x, position_embeddings=(cos, sin), position_ids=pos)
        y = y[0] if isinstance(y, tuple) else y
    del x
    gc.collect()
    before = {t.untyped_storage().data_ptr() for t in (*layer.parameters(), x0, cos, sin, y)}
    live = {p: n for ref, n, p in made if not ref.expired() and p not in before}
    return sum(live.values())


def test_torch_keeps_each_modules_inputs():
    # whole layer: its input alone (rlmcost's full-checkpoint count, parallel.activations)
    a = arch_numbers(TOY)
    assert _kept_bytes("layer") == T * saved_bytes(a, 1, False, Checkpointing.FULL, False, 2)
    # per module: both norms' inputs and the attention's and MLP's, 4 d in bf16
    assert _kept_bytes("modules") == T * kept_bytes_per_token_layer(a, 1, False, 2) == T * 4 * D * 2


def test_module_peak_is_the_larger_modules_saved_tensors():
    # blocks.memory's count for Llama-3.1-8B in bf16: the attention's q, k, v, output (2 q +
    # 2 kv wide) and fp32 log-sum-exp (4 h), the gated FFN's 4 d_ff
    a = arch_numbers(LLAMA)
    attention, ffn = 2 * (2 * 4096 + 2 * 1024) + 4 * 32, 2 * 4 * 14336
    assert module_peak_bytes_per_token(a, 1, False, 2, False) == max(attention, ffn) == ffn
    assert module_peak_bytes_per_token(a, 2, True, 2, False) == ffn // 2  # TP 2: the FFN's half
    moe = arch_numbers(get_model("qwen3-30b-a3b").arch())  # top 8 of 768-wide experts
    assert module_peak_bytes_per_token(moe, 1, False, 2, True) == \
        2 * 4 * 8 * 768 + 2 * 2048 * 8 + 4 * 128  # fmt: skip
    # the parts add up to the layer's saved bytes without checkpointing
    none = saved_bytes(a, 1, False, Checkpointing.NONE, False, 2)
    assert kept_bytes_per_token_layer(a, 1, False, 2) + attention + ffn == none


def test_stage_activations_per_module():
    wl = Workload()
    layout = Layout(dp=8, zero=ZeroStage.OS_G_P, micro_batch=2, ckpt=Checkpointing.FULL)
    whole = memory_per_stage(LLAMA, layout, "train", 16, 4096, wl)
    (mod,) = per_module_stages(whole, LLAMA, layout, 16, 4096, wl)
    tokens, d = 2 * 4096, 4096
    kept = 32 * 4 * d * 2 + d * 2  # 32 layers' 4 d-wide inputs, the final norm's input
    assert mod.activations == tokens * (kept + 2 * 4 * 14336)  # one FFN rebuilt, not a layer
    assert mod.activations > whole[0].activations and mod.weights == whole[0].weights
    pp = layout.with_(pp=2, dp=4, zero=ZeroStage.OS)  # 1F1B: stage 0 holds 2 micro-batches
    first, last = per_module_stages(memory_per_stage(LLAMA, pp, "train", 16, 4096, wl),
                                    LLAMA, pp, 16, 4096, wl)  # fmt: skip
    assert first.activations == 2 * tokens * 16 * 4 * d * 2 + tokens * 2 * 4 * 14336
    assert last.activations == tokens * (16 * 4 * d * 2 + d * 2 + 2 * 4 * 14336)


def _train(framework: str | None, **train: object) -> Deployment:
    return Deployment(framework=framework, train=TrainLayout(**train))


def test_only_nemo_rls_dtensor_worker_wraps_modules():
    # the preset prices NeMo RL's v2 worker (the examples' _v2: true): whole layers, reentrant;
    # --module-ckpt the v1 worker's modules, its non-reentrant checkpoint_wrapper stopping early
    v2 = step_options(_train("nemo-rl", zero="3", ckpt="full"))
    assert v2 is None or not (v2.module_ckpt or v2.recompute_early_stop)
    nemo = step_options(_train("nemo-rl", zero="3", ckpt="full", module_ckpt=True))
    assert nemo is not None and nemo.module_ckpt and nemo.recompute_early_stop
    assert not step_options(_train("nemo-rl", zero="1", tp=2, ckpt="full")).module_ckpt  # Megatron
    assert not step_options(_train("verl", zero="3", ckpt="full")).module_ckpt  # whole layers
    off = step_options(_train("nemo-rl", zero="3", ckpt="full", module_ckpt=True,
                              recompute_early_stop=False))  # fmt: skip
    assert off.module_ckpt and not off.recompute_early_stop
    full = Layout(dp=8, zero=ZeroStage.OS_G_P, ckpt=Checkpointing.FULL)
    z3 = TrainLayout(zero="3", ckpt="full", module_ckpt=True)
    dep = _train("nemo-rl", zero="3", ckpt="full", module_ckpt=True)
    assert module_ckpt_applies(dep, z3, full, LLAMA)
    plain = TrainLayout(zero="3", ckpt="full")
    assert not module_ckpt_applies(_train("nemo-rl", zero="3", ckpt="full"), plain, full, LLAMA)
    assert not module_ckpt_applies(_train("nemo-rl"), TrainLayout(zero="1", tp=2), full, LLAMA)
    none = full.with_(ckpt=Checkpointing.NONE)
    assert not module_ckpt_applies(dep, z3, none, LLAMA)
    assert not module_ckpt_applies(Deployment(framework="nemo-rl", ideal=True), plain, full,
                                   LLAMA)  # fmt: skip
    hybrid = get_model("qwen3-next-80b-a3b").arch()  # linear-attention mixers: not modelled
    assert not module_ckpt_applies(dep, z3, full, hybrid)


def _step(arch, options: StepOptions, **layout: object):
    lay = Layout(**{"dp": 8, "zero": ZeroStage.OS_G_P, "micro_batch": 1,
                    "ckpt": Checkpointing.FULL, **layout})  # fmt: skip
    return train_step_time(arch, lay, 64, 4096, get_hardware("h100-sxm"), options=options)


def test_step_time_skips_both_projections_and_the_adds():
    whole = _step(LLAMA, StepOptions(recompute_early_stop=True))  # verl's whole layer
    mod = _step(LLAMA, ON)
    tokens = 64 * 4096
    assert whole.hardware_flops - mod.hardware_flops == 32 * 2 * 4096 * 4096 * tokens  # o_proj
    assert mod.compute_s["recompute"] < whole.compute_s["recompute"]
    assert MODULE_NOTE in mod.notes
    no_stop = _step(LLAMA, replace(ON, recompute_early_stop=False))
    rerun = _step(LLAMA, StepOptions())  # the whole layer, no early stop
    assert no_stop.hardware_flops == rerun.hardware_flops  # every GEMM again
    assert 0 < rerun.compute_s["recompute"] - no_stop.compute_s["recompute"] < \
        0.04 * rerun.compute_s["recompute"]  # only the two residual adds  # fmt: skip
    assert MODULE_WHOLE_NOTE in no_stop.notes
    # TP 2: the two projections' all-reduces are not rerun either
    tp_whole, tp_mod = (_step(LLAMA, o, tp=2) for o in (StepOptions(recompute_early_stop=True), ON))
    assert tp_mod.compute_s["recompute"] < tp_whole.compute_s["recompute"]


def test_a_moe_block_reruns_whole_and_a_hybrid_layer_is_a_whole_layer():
    moe = get_model("qwen3-30b-a3b").arch()  # every layer MoE: only o_proj is left out
    whole, mod = (_step(moe, o, ep=8) for o in (StepOptions(recompute_early_stop=True), ON))
    assert whole.hardware_flops - mod.hardware_flops == \
        48 * 2 * 2048 * int(moe.v_width) * 64 * 4096  # fmt: skip
    hybrid = get_model("qwen3-next-80b-a3b").arch()
    a, b = (_step(hybrid, o, ep=8) for o in (StepOptions(recompute_early_stop=True), ON))
    assert a.step_s == b.step_s and a.hardware_flops == b.hardware_flops
    assert MODULE_NOTE not in b.notes


def test_nemo_rl_query_prices_and_notes_it():
    runner = CliRunner()
    args = ["grpo", "-m", "llama-3.1-8b", "--framework", "nemo-rl", "--gpus", "8", "--json"]

    def run(*extra: str) -> tuple[float, int, list[str]]:
        res = runner.invoke(app, [*args, *extra])
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        update = {p["name"]: p["time_s"] for p in out["phases"]}["update actor"]
        act = out["stages"]["training"]["memory_breakdown_bytes"]["activations"]
        return update, act, out["notes"]

    on, off, none = run("--ckpt", "full", "--module-ckpt"), \
        run("--ckpt", "full", "--module-ckpt", "--no-recompute-early-stop"), \
        run("--ckpt", "none")  # fmt: skip
    assert on[0] < off[0] and MODULE_NOTE in on[2] and MODULE_WHOLE_NOTE in off[2]
    assert on[1] == off[1] < none[1]  # the same inputs kept, fewer than without checkpoints
    assert MODULE_NOTE not in none[2]


def test_kept_bytes_shard_under_sequence_parallelism():
    a = arch_numbers(LLAMA)
    assert kept_bytes_per_token_layer(a, 4, True, 2) == Fraction(4 * 4096 * 2, 4)
    assert kept_bytes_per_token_layer(a, 4, False, 2) == 4 * 4096 * 2


def test_the_fast_path_equals_the_plain_evaluation():
    """Deployments differing only in their checkpointing keep no estimate for each other
    (the trainer layout is in ``placement.group_key``'s keys, StepOptions in the passes') and
    equal their plain evaluation: NeMo RL per module with and without the early stop, and
    verl's whole layer, on one query."""
    from fast_plain import fast_and_plain

    def variant(framework: str, early: bool | None):
        def edit(dep: dict) -> None:
            dep.update(framework=framework)
            for layout in ("train", "forward"):
                dep[layout].update(zero="3", ckpt="full", recompute_early_stop=early)
        return edit

    fast, plain = fast_and_plain([variant("nemo-rl", None), variant("nemo-rl", False),
                                  variant("verl", None)])
    assert fast == plain and len(set(fast)) == 3
