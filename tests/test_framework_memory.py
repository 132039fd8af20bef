"""Training memory as torchtitan allocates it (rlmcost/parallel/framework_memory.py).

Independent checks: the bytes a transformers Llama layer keeps under torchtitan's op-level
selective checkpointing policy and the peak of ``F.cross_entropy(logits.float())``, both
measured on CPU PyTorch as the live storages' bytes (tests/live_bytes.py), not from the
formulas; the gathered stage of Llama-3.1-405B from its published shapes (meta-llama/
Llama-3.1-405B config.json: d 16,384, 128 heads, 8 KV heads of 128, d_ff 53,248) by hand; the
reference and compiled memory models equal under every new field.
"""

from __future__ import annotations

import gc
import json
from collections import defaultdict
from fractions import Fraction

import pytest
from live_bytes import live_mode
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.compiled.memory import memory_per_stage as fast
from rlmcost.errors import SpecError
from rlmcost.parallel.breakdown import Mode
from rlmcost.parallel.framework_memory import (
    compiled_loss_bytes,
    op_sac_bytes_per_token_layer,
    upcast_loss_bytes,
)
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.parallel.memory import memory_per_stage as reference
from rlmcost.specs import get_model

_SMALL = dict(d=256, q=256, kv=64, d_ff=704, heads=8)  # the test layer's shapes


def _sac_policy(torch, save):  # noqa: ANN001, ANN202
    """torchtitan's ``_custom_policy`` (parallelize_llama.py @9dec370), restated."""
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    def context():  # noqa: ANN202
        meta: dict[str, int] = defaultdict(int)

        def policy(ctx, func, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            mode = "recompute" if ctx.is_recompute else "forward"
            if func == torch.ops.aten.mm.default:
                meta[mode] += 1
            keep = func in save and not (func == torch.ops.aten.mm.default and meta[mode] % 2 == 0)
            return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

        return create_selective_checkpoint_contexts(policy)

    return context


def test_op_sac_keeps_what_a_llama_layer_keeps_on_cpu() -> None:
    """A transformers LlamaDecoderLayer (GQA, gated FFN) under torch.utils.checkpoint with
    torchtitan's policy: the storages alive after its forward, less its output and the
    tensors made before, per token, equal the count (the CPU SDPA kernel,
    ``_scaled_dot_product_flash_attention_for_cpu``, stands for the CUDA flash one)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from torch.utils.checkpoint import checkpoint
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

    cfg = LlamaConfig(hidden_size=256, intermediate_size=704, num_attention_heads=8,
                      num_key_value_heads=2, head_dim=32, vocab_size=64,
                      attn_implementation="sdpa")  # fmt: skip
    layer = LlamaDecoderLayer(cfg, 0).to(torch.bfloat16)
    b, s = 2, 128
    x0 = torch.randn(b, s, 256, dtype=torch.bfloat16, requires_grad=True)
    cos, sin = LlamaRotaryEmbedding(cfg)(x0, torch.arange(s)[None].expand(b, s))
    ops = torch.ops.aten
    save = {ops.mm.default, ops._scaled_dot_product_flash_attention.default,
            ops._scaled_dot_product_efficient_attention.default,
            ops._scaled_dot_product_flash_attention_for_cpu.default,
            ops.abs.default, ops.max.default}  # fmt: skip
    mode = live_mode()
    with mode:
        x = x0 * 1  # the layer's input, made inside the mode

        def run(h):  # noqa: ANN001, ANN202
            return layer(h, position_embeddings=(cos, sin))

        out = checkpoint(run, x, use_reentrant=False, context_fn=_sac_policy(torch, save))
        out = out[0] if isinstance(out, tuple) else out
        gc.collect()
        before = {t.untyped_storage().data_ptr() for t in [*layer.parameters(), cos, sin, x0]}
        live = sum(n for p, (ref, n) in mode.refs.items() if not ref.expired() and p not in before)
    kept = Fraction(live - out.untyped_storage().nbytes(), b * s)
    assert kept == op_sac_bytes_per_token_layer(**_SMALL, gated=True, tp=1, sp=False, x=2)
    assert kept == 3616  # 2 (256 + 256 + 64 + 256 + 704 + 256) + 4 x 8


@pytest.mark.parametrize("pp", [1, 2])
def test_upcast_loss_peak_on_cpu(pp: int) -> None:
    """F.cross_entropy(logits.float()) on bf16 logits: the peak live bytes of forward and
    backward, less the head's weight (a view of it is counted) and the hidden-width tensors,
    are 12 B a logit, 14 where a pipeline schedule keeps the logits for the backward."""
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    t, v, d = 512, 1000, 4
    w = torch.randn(v, d, dtype=torch.bfloat16, requires_grad=True)
    h = torch.randn(t, d, dtype=torch.bfloat16, requires_grad=True)
    labels = torch.randint(0, v, (t,))
    mode = live_mode()
    with mode:
        pred = F.linear(h, w)
        loss = F.cross_entropy(pred.float(), labels)
        kept = [pred] if pp > 1 else []  # torch's pipelining stage keeps its output (fwd_cache)
        del pred
        loss.backward()
    assert kept is not None
    slack = w.nbytes + 4 * h.nbytes  # the weight's view and hidden-width grads: < 1 % here
    expect = upcast_loss_bytes(t, v, pp, 2)
    assert expect <= mode.peak <= expect + slack
    assert expect == t * v * (12 if pp == 1 else 14)


def test_loss_parallel_peak_on_cpu() -> None:
    """torch's loss-parallel cross-entropy (torch/distributed/tensor/parallel/loss.py, read at
    torch 2.13: ``_log_softmax`` and ``_nll_loss_and_log_softmax_backward``), restated on one
    rank's shard without its all-reduces: the live bytes peak at 16 B a logit in the backward
    (the saved log-softmax, the zero-filled gradient, its exp and their sum), 14 B in the
    forward with the bf16 logits."""
    torch = pytest.importorskip("torch")

    t, v = 512, 1000
    pred = torch.randn(t, v).to(torch.bfloat16)
    target = torch.randint(0, v, (t, 1))
    mode = live_mode()
    with mode:
        x = pred.float()
        shifted = x - torch.amax(x, 1, keepdim=True)
        lse = torch.log(torch.sum(torch.exp(shifted), 1, keepdim=True))
        result = shifted - lse
        del x, shifted
        forward, mode.peak = mode.peak, 0
        grad_input = torch.zeros_like(result)
        grad_input[torch.arange(t), target.squeeze(1)] = -1.0
        grad = (grad_input + torch.exp(result)) * (torch.ones(()) / t)
        del grad_input
    assert grad is not None
    # three fp32 per logit (+ per-row numbers); the bf16 logits, made before the mode, + 2
    assert t * v * 3 * 4 <= forward <= t * v * 3 * 4 + t * 8
    assert upcast_loss_bytes(t, v, 1, 2, tp=2) == t * v * 16 <= mode.peak <= t * v * 16 + t * 64


def test_compiled_loss_buffers_on_cpu() -> None:
    """torch.compile (Inductor, CPU) of torchtitan's cross_entropy_loss on bf16 logits: the
    tensors its forward saves for the backward are the bf16 logits and fp32 numbers per
    position, and the buffers either graph allocates are per-position fp32 but one, the
    backward's bf16 gradient of the logits: 2 x 2 B a logit (compiled_loss_bytes)."""
    torch = pytest.importorskip("torch")
    import re
    import shutil

    import torch.nn.functional as F
    from torch._inductor.utils import run_and_get_code

    if not (shutil.which("g++") or shutil.which("c++")):
        pytest.skip("Inductor's CPU backend needs a C++ compiler")
    n, v = 64, 1000

    def loss_fn(pred, labels):  # noqa: ANN001, ANN202  (torchtitan components/loss.py @e7c0cae)
        return F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))

    pred = torch.randn(2, n // 2, v, dtype=torch.bfloat16, requires_grad=True)
    labels = torch.randint(0, v, (2, n // 2))
    saved: list[tuple[tuple[int, ...], object]] = []

    def pack(t):  # noqa: ANN001, ANN202
        saved.append((tuple(t.shape), t.dtype))
        return t

    def run():  # noqa: ANN202
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = torch.compile(loss_fn)(pred, labels)
        loss.backward()

    torch._dynamo.reset()
    _, codes = run_and_get_code(run)
    big = [x for x in saved if x[0] and x[0][-1] == v]
    assert big == [((2, n // 2, v), torch.bfloat16)]  # the logits themselves, nothing fp32
    alloc = r"empty_strided_cpu\(\(([^)]*)\), \([^)]*\), (torch\.\w+)"
    buffers = [(b, t) for c in codes for b, t in re.findall(alloc, c)]
    assert (f"{n}, {v}", "torch.bfloat16") in buffers  # the backward's gradient
    wide = [(b, t) for b, t in buffers if b.endswith(f", {v}")]
    assert wide == [(f"{n}, {v}", "torch.bfloat16")]
    assert compiled_loss_bytes(n, v, 2) == n * v * 4 + n * 12


def test_pp_gathered_stage_of_405b_by_hand() -> None:
    """Llama-3.1-405B at TP 8, PP 8 (15 + 6 x 16 + 15 layers): a middle stage keeps its 16
    layers' TP shards gathered in bf16 and their gradients in fp32, 6 B a parameter."""
    d, kv, ff = 16_384, 8 * 128, 53_248
    layer = (2 * d * d + 2 * d * kv + 3 * d * ff) // 8 + 2 * d  # norms not split over TP
    lay = Layout(dp=8, tp=8, pp=8, sp=True, zero=ZeroStage.OS_G_P, ckpt=Checkpointing.FULL,
                 micro_batch=4, pp_first_layers=15, pp_last_layers=15, pp_fsdp_gathered=True)
    arch = get_model("llama-3.1-405b").arch()
    stage = fast(arch, lay, Mode.TRAIN, 256, 8192)[1]
    assert stage.buffers == 16 * layer * (2 + 4)
    assert fast(arch, lay.with_(pp_fsdp_gathered=False), Mode.TRAIN, 256, 8192)[1].buffers \
        == 2 * layer * 2  # fmt: skip


@pytest.mark.parametrize("lay", [
    Layout(dp=4, ckpt=Checkpointing.SELECTIVE, op_sac=True, loss_upcast=True, micro_batch=2),
    Layout(dp=2, tp=2, sp=True, ckpt=Checkpointing.SELECTIVE, op_sac=True),
    Layout(dp=2, tp=2, ckpt=Checkpointing.SELECTIVE, op_sac=True, zero=ZeroStage.OS_G_P),
    Layout(dp=2, pp=2, zero=ZeroStage.OS_G_P, pp_fsdp_gathered=True, loss_upcast=True),
    Layout(dp=2, pp=4, tp=2, sp=True, zero=ZeroStage.OS_G_P, pp_fsdp_gathered=True,
           ckpt=Checkpointing.SELECTIVE, op_sac=True, loss_upcast=True),
    Layout(dp=4, ckpt=Checkpointing.SELECTIVE, op_sac=True, loss_compiled=True, micro_batch=2),
    Layout(dp=2, pp=2, zero=ZeroStage.OS_G_P, pp_fsdp_gathered=True, loss_compiled=True),
    Layout(dp=2, tp=4, sp=True, ckpt=Checkpointing.FULL, loss_upcast=True),
])  # fmt: skip
def test_reference_and_compiled_agree(lay: Layout) -> None:
    arch = get_model("llama-3.1-8b").arch()
    assert reference(arch, lay, Mode.TRAIN, 16, 4096) == fast(arch, lay, Mode.TRAIN, 16, 4096)


def test_the_fields_change_only_their_terms() -> None:
    arch = get_model("llama-3.1-8b").arch()
    base = Layout(dp=8, zero=ZeroStage.OS_G_P, ckpt=Checkpointing.SELECTIVE, micro_batch=2)
    a, b = fast(arch, base, Mode.TRAIN, 16, 8192)[0], fast(
        arch, base.with_(op_sac=True), Mode.TRAIN, 16, 8192)[0]  # fmt: skip
    assert b.activations < a.activations / 2 and (a.logits, a.buffers) == (b.logits, b.buffers)
    c = fast(arch, base.with_(loss_upcast=True), Mode.TRAIN, 16, 8192)[0]
    head_input = 2 * 8192 * 4096 * 2  # a micro-batch's tokens x d in bf16 (the head's input)
    assert c.logits == 3 * a.logits and c.activations == a.activations + head_input
    e = fast(arch, base.with_(loss_compiled=True), Mode.TRAIN, 16, 8192)[0]
    assert e.logits == 2 * 8192 * (128_256 * 4 + 12) and e.activations == c.activations


def test_refusals() -> None:
    moe = get_model("qwen3-30b-a3b").arch()
    with pytest.raises(SpecError, match="dense blocks"):
        fast(moe, Layout(dp=8, ep=8, ckpt=Checkpointing.SELECTIVE, op_sac=True),
             Mode.TRAIN, 8, 1024)  # fmt: skip
    arch = get_model("llama-3.1-8b").arch()
    with pytest.raises(SpecError, match="--pp > 1 and --zero 3"):
        reference(arch, Layout(dp=2, zero=ZeroStage.OS_G_P, pp_fsdp_gathered=True),
                  Mode.TRAIN, 2, 1024)  # fmt: skip
    res = CliRunner().invoke(app, ["train", "-m", "llama-3.1-8b", "--loss-logits", "bf16"])
    assert res.exit_code != 0 and "--loss-logits" in res.output
    res = CliRunner().invoke(app, ["train", "-m", "llama-3.1-8b", "--gpus", "2", "--tp", "2",
                                   "--loss-logits", "compiled"])  # fmt: skip
    assert res.exit_code != 0 and "loss parallel" in res.output
    with pytest.raises(SpecError, match="set one"):
        fast(arch, Layout(loss_upcast=True, loss_compiled=True), Mode.TRAIN, 2, 1024)


def test_memory_flags_leave_the_step_time() -> None:
    """The flags price memory only: the step time of a torchtitan row is unchanged."""
    argv = ["train", "-m", "llama-3.1-8b", "-H", "h100-hbm2e-500w", "--gpus", "8", "--zero",
            "3", "--ckpt", "selective", "--micro-batch", "2", "--seq", "8192", "--batch", "16",
            "--json"]  # fmt: skip
    plain = json.loads(CliRunner().invoke(app, [*argv, "--selective", "every-second-mm"]).output)
    more = json.loads(CliRunner().invoke(app, [*argv, "--selective", "every-second-mm",
                                               "--loss-logits", "upcast"]).output)  # fmt: skip
    assert plain["step_time_s"] == more["step_time_s"]
    assert more["memory_per_rank_bytes"]["logits"] == 3 * plain["memory_per_rank_bytes"]["logits"]
