"""Image tokens as a workload of a vision-language model (``--image-tokens``): the vision
tower's FLOPs in every pass and its saved activations in training.

Independent side: ``FlopCounterMode`` over transformers' Qwen2.5-VL vision tower on a small CPU
model, windowed and full-attention blocks both; the symbolic activation model
(``parallel.activations.saved_bytes_per_token_layer``, sympy) on the tower's block shape.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.arch import Arch
from rlmcost.choices import Dtype, FfnKind, NormKind
from rlmcost.cli import app
from rlmcost.parallel.activations import saved_bytes_per_token_layer
from rlmcost.parallel.layout import Checkpointing
from rlmcost.specs.hf_config import spec_from_config

runner = CliRunner()

TEXT = dict(hidden_size=96, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            intermediate_size=128, vocab_size=1000, max_position_embeddings=4096,
            rms_norm_eps=1e-6, rope_theta=1e6, tie_word_embeddings=False)  # fmt: skip
# window_size 112 = 4 merged tokens a side = 8 x 8 patches; block 1 attends over the image
VISION = dict(depth=2, hidden_size=64, out_hidden_size=96, intermediate_size=80, num_heads=4,
              window_size=112, fullatt_block_indexes=[1])  # fmt: skip


def _config() -> dict:
    return {"model_type": "qwen2_5_vl", **TEXT, "vision_config": VISION}


def test_tower_flops_equal_flop_counter_with_windows():
    """One image of 16 x 8 patches (32 tokens of 2 x 2 patches): the windowed block attends
    within two full 8 x 8 windows, the full block over all 128 patches."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from torch.utils.flop_counter import FlopCounterMode

    cfg = transformers.Qwen2_5_VLConfig(vision_config=VISION, text_config=TEXT)
    model = transformers.AutoModelForImageTextToText.from_config(cfg, attn_implementation="eager")
    grid = torch.tensor([[1, 16, 8]])
    n = 128
    pixels = torch.randn(n, 3 * 2 * 14 * 14)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model.model.visual(pixels, grid_thw=grid)
    spec = spec_from_config(_config(), name="tiny-vl")
    assert spec.encoder_window_patches == 64 and spec.encoder_full_attention_layers == 1
    assert counter.get_total_flops() == spec.encoder_forward_flops(n // 4)


@pytest.fixture(scope="module")
def tiny_vl(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("vl") / "config.json"
    path.write_text(json.dumps(_config()))
    return path


def _stages(model: Path, *extra: str) -> dict:
    r = runner.invoke(app, ["grpo", "-m", str(model), "-B", "4", "-K", "2", "-S", "128", "-T",
                            "64", "--gpus", "2", "--json", *extra])  # fmt: skip
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_image_tokens_add_the_towers_passes(tiny_vl: Path):
    """8 sequences, one 32-token image each: generation encodes each image once; the actor's
    log-prob forward and the reference's once each; training forward and backward (3 x)
    unless the tower is frozen (verl actor.freeze_vision_tower default False)."""
    per_image = spec_from_config(_config(), name="x").encoder_forward_flops(32)
    base = _stages(tiny_vl)
    img = _stages(tiny_vl, "--image-tokens", "32")
    frozen = _stages(tiny_vl, "--image-tokens", "32", "--freeze-vision-tower")
    n = 8
    work = {k: img["stages"][k]["work_flops"] - base["stages"][k]["work_flops"]
            for k in base["stages"]}  # fmt: skip
    forwards = sum(1 for i in base["stages"]["assessment"]["invocations"] if i["kind"] ==
                   "forward")  # fmt: skip
    assert work == {"generation": n * per_image, "assessment": forwards * n * per_image,
                    "training": 3 * n * per_image}  # fmt: skip
    frozen_train = frozen["stages"]["training"]["work_flops"]
    assert frozen_train - base["stages"]["training"]["work_flops"] == n * per_image
    assert img["stages"]["training"]["time_s"] > base["stages"]["training"]["time_s"]


def test_a_trained_tower_saves_its_activations(tiny_vl: Path):
    """Training with the tower trained keeps, per patch and vision block, the bytes the
    symbolic activation model gives for the tower's block (no TP, no checkpointing: NeMo
    RL's default), for the micro-batch's images; frozen: none."""
    base = _stages(tiny_vl)["stages"]["training"]["memory_breakdown_bytes"]["activations"]
    out = _stages(tiny_vl, "--image-tokens", "32")
    img = out["stages"]["training"]["memory_breakdown_bytes"]["activations"]
    frozen = _stages(tiny_vl, "--image-tokens", "32", "--freeze-vision-tower")
    assert frozen["stages"]["training"]["memory_breakdown_bytes"]["activations"] == base
    tower = Arch(name="tower", n_layers=2, d_model=64, d_ff=80, n_heads=4, n_kv_heads=4,
                 head_dim=16, vocab=1, ffn_kind=FfnKind.GATED, norm=NormKind.RMSNORM,
                 qkv_bias=True, out_bias=True, mlp_bias=True)  # fmt: skip
    per_patch = saved_bytes_per_token_layer(tower, 1, False, Checkpointing.NONE, False,
                                            Dtype.BF16)  # fmt: skip
    # packing (NeMo RL): 4 x 192 tokens per micro-batch = 4 images of 32 x 4 patches
    patches = 4 * 32 * 4
    assert img - base == patches * 2 * int(per_patch)


def test_image_tokens_need_a_tower_and_fit_the_prompt(tiny_vl: Path):
    for args in (["-m", "8b", "--image-tokens", "16"],
                 ["-m", str(tiny_vl), "-S", "64", "--image-tokens", "65"]):  # fmt: skip
        r = runner.invoke(app, ["grpo", *args])
        assert r.exit_code == 2 and "Traceback" not in r.output, r.output
        assert "--image-tokens" in r.output and len(r.output.strip().splitlines()) == 1


def test_command_reproduces_image_tokens(tiny_vl: Path, tmp_path: Path):
    out = _stages(tiny_vl, "--image-tokens", "32", "--freeze-vision-tower")
    path = tmp_path / "out.json"
    path.write_text(json.dumps(out))
    r = runner.invoke(app, ["run", str(path), "--command"])
    assert r.exit_code == 0, r.output
    assert "--image-tokens 32" in r.stdout and "--freeze-vision-tower" in r.stdout
