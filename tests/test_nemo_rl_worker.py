"""NeMo RL's DTensor v1 and v2 workers' full recomputation (rlmcost.frameworks.nemo_rl_worker,
``TrainLayout.module_ckpt``).

Sources: NeMo RL ``nemo_rl/models/policy/lm_policy.py`` (``_v2`` false when absent, v0.4.0 to
v0.7.0), ``examples/configs/grpo_math_1B.yaml`` (``_v2: true`` from v0.4.0), NeMo Automodel
``nemo_automodel/components/distributed/parallelizer.py`` @24b47e85 (v0.7.0's pin, lines
233-283: ``gradient_checkpointing_enable(use_reentrant=True)`` for a transformers
``GradientCheckpointingLayer``), its registry and NeMo RL's ``_maybe_set_force_hf``
(``nemo_rl/models/automodel/setup.py`` v0.7.0). The independent check: torch's FLOP counter
over the backward of a transformers Llama decoder layer under that reentrant checkpoint.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlmcost.deployment.spec import Deployment, TrainLayout
from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.nemo_rl_worker import (
    AUTOMODEL_CLASSES,
    AUTOMODEL_NOTE,
    REENTRANT_NOTE,
    V1_NOTE,
)
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.perf.step_pass import StepOptions
from rlmcost.perf.train_step import train_step_time
from rlmcost.placement.pass_options import module_ckpt_on, step_options
from rlmcost.run.command import to_command
from rlmcost.run.spec import Run
from rlmcost.specs import get_hardware, get_model

CFG = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"  # qwen2.5-7b
C = "policy.dtensor_cfg"
CKPT = f"{C}.activation_checkpointing=true"
D, FF, H, KV, T = 64, 176, 4, 2, 32  # the toy Llama layer


def _import(*overrides: str):
    q = import_nemo_rl(CFG, list(overrides), 200)
    return dict(q.flags), q.notes


def test_v1_is_nemo_rls_default_and_wraps_modules() -> None:
    flags, notes = _import(CKPT)  # no _v2 key: lm_policy.py's False
    assert "--no-module-ckpt" not in flags and "--no-recompute-early-stop" not in flags
    assert V1_NOTE in notes and flags["--ckpt"] == "full"
    flags, notes = _import(CKPT, f"+{C}._v2=false")
    assert "--no-module-ckpt" not in flags and V1_NOTE in notes


def test_v2_runs_a_transformers_model_reentrant_whole_layers() -> None:
    # Qwen2: Automodel has a class, but its adapter lacks convert_single_tensor_to_hf, so
    # NeMo RL's _maybe_set_force_hf builds the transformers class (setup.py v0.7.0)
    flags, notes = _import(CKPT, f"+{C}._v2=true")
    assert "--no-module-ckpt" in flags and "--no-recompute-early-stop" in flags
    why = "NeMo RL's _maybe_set_force_hf turns Automodel's Qwen2 class off"
    assert REENTRANT_NOTE.format(model="qwen2.5-7b", why=why) in notes
    for model in ("llama-3.1-8b", "qwen3-8b", "gemma-2-9b", "mixtral-8x7b"):  # no own class
        flags, _ = _import(CKPT, f"+{C}._v2=true", f"policy.model_name={model}")
        assert "--no-recompute-early-stop" in flags, model
    flags, notes = _import(CKPT, f"+{C}._v2=true")
    assert not any("Automodel's own class" in n for n in notes)


def test_v2_runs_automodels_moe_classes_whole_layers_stopped_early() -> None:
    assert get_model("qwen3-30b-a3b").model_type in AUTOMODEL_CLASSES
    model = ["policy.model_name=qwen3-30b-a3b", f"+{C}._v2=true"]
    flags, notes = _import(CKPT, *model)
    assert "--no-module-ckpt" in flags and "--no-recompute-early-stop" not in flags
    assert AUTOMODEL_NOTE.format(model="qwen3-30b-a3b") in notes
    flags, notes = _import(CKPT, *model, f"+{C}.automodel_kwargs.force_hf=true")
    assert "--no-recompute-early-stop" in flags  # force_hf: the transformers class
    assert REENTRANT_NOTE.format(model="qwen3-30b-a3b", why="automodel_kwargs.force_hf") in notes
    with pytest.raises(SpecError, match="refuses tensor parallelism"):  # moe/parallelizer.py
        _import(*model, f"{C}.tensor_parallel_size=2")
    flags, _ = _import(*model, f"{C}.tensor_parallel_size=2",
                       f"+{C}.automodel_kwargs.force_hf=true")  # the transformers class
    assert flags["--tp"] == 2
    flags, notes = _import(CKPT, "policy.model_name=qwen3-8b", f"+{C}._v2=true")
    assert REENTRANT_NOTE.format(model="qwen3-8b",
                                 why="NeMo Automodel has no class of its own") in notes


@pytest.mark.parametrize("model", ["glm-4.7-flash", "minimax-m2", "qwen3.5-35b-a3b",
                                   "qwen3-vl-30b-a3b"])
def test_later_automodel_classes_are_their_own(model: str) -> None:
    # NeMo Automodel 24b47e85 (NeMo RL @7ea279abf's pin) nemo_automodel/_transformers/
    # registry.py MODEL_ARCH_MAPPING names Glm4MoeLiteForCausalLM, MiniMaxM2ForCausalLM,
    # Qwen3_5MoeForConditionalGeneration and Qwen3VLMoeForConditionalGeneration
    flags, notes = _import(CKPT, f"policy.model_name={model}", f"+{C}._v2=true")
    assert "--no-module-ckpt" in flags and "--no-recompute-early-stop" not in flags
    assert AUTOMODEL_NOTE.format(model=model) in notes


def test_an_unknown_models_class_is_not_guessed() -> None:
    flags, notes = _import(CKPT, f"+{C}._v2=true", "policy.model_name=org/NotAModel-1B")
    assert "--no-module-ckpt" not in flags and any("unknown to rlmcost" in n for n in notes)


def test_without_checkpointing_the_worker_changes_nothing() -> None:
    flags, notes = _import(f"+{C}._v2=true")
    assert flags["--ckpt"] == "none" and "--no-module-ckpt" not in flags
    assert not any("_v2" in n for n in notes)


def test_transformers_layer_is_a_gradient_checkpointing_layer_rerun_whole() -> None:
    """Automodel's branch needs the layer to be a transformers GradientCheckpointingLayer; under
    ``use_reentrant=True`` the backward reruns the whole layer: backward FLOPs = the plain
    backward's + one forward (torch's FLOP counter), the rerun rlmcost prices with neither
    the early stop nor the per-module checkpoint."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import LlamaConfig
    from transformers.modeling_layers import GradientCheckpointingLayer
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

    cfg = LlamaConfig(hidden_size=D, intermediate_size=FF, num_attention_heads=H,
                      num_key_value_heads=KV, head_dim=D // H, attn_implementation="sdpa")
    assert issubclass(LlamaDecoderLayer, GradientCheckpointingLayer)

    def run(ckpt: bool) -> tuple[int, int]:
        torch.manual_seed(0)
        layer, rope = LlamaDecoderLayer(cfg, 0), LlamaRotaryEmbedding(cfg)
        layer.train()
        if ckpt:  # what PreTrainedModel.gradient_checkpointing_enable sets on each layer
            from functools import partial

            from torch.utils.checkpoint import checkpoint

            layer.gradient_checkpointing = True
            layer._gradient_checkpointing_func = partial(checkpoint, use_reentrant=True)
        x = torch.randn(1, T, D, requires_grad=True)
        pos = torch.arange(T)[None]
        with FlopCounterMode(display=False) as fwd:
            out = layer(x, position_embeddings=rope(x, pos), position_ids=pos)
        y = out[0] if isinstance(out, tuple) else out
        with FlopCounterMode(display=False) as bwd:
            y.sum().backward()
        return int(fwd.get_total_flops()), int(bwd.get_total_flops())

    (f0, b0), (f1, b1) = run(False), run(True)
    assert f0 == f1 and b1 == b0 + f0  # the whole forward again, no early stop
    lay = Layout(dp=8, zero=ZeroStage.OS_G_P, micro_batch=1, ckpt=Checkpointing.FULL)
    arch, dev = get_model("llama-3.1-8b").arch(), get_hardware("h100-sxm")
    whole, early = (train_step_time(arch, lay, 64, 4096, dev, options=o)
                    for o in (StepOptions(), StepOptions(recompute_early_stop=True)))
    # rlmcost's rerun without either option: every layer's forward, down projection included
    assert whole.hardware_flops - early.hardware_flops == 32 * 2 * 4096 * 14336 * 64 * 4096


def test_module_ckpt_given_overrides_the_preset_and_is_checked() -> None:
    def dep(**train: object) -> Deployment:
        return Deployment(framework="nemo-rl", train=TrainLayout(**train))

    # the preset prices the v2 worker (the examples' _v2: true): whole layers, reentrant
    v2 = step_options(dep(zero="3", ckpt="full"))
    assert v2 is None or (not v2.module_ckpt and not v2.recompute_early_stop)
    # --module-ckpt: the v1 worker's non-reentrant checkpoint_wrapper, its early stop on
    on = step_options(dep(zero="3", ckpt="full", module_ckpt=True))
    off = step_options(dep(zero="3", ckpt="full", module_ckpt=False, recompute_early_stop=False))
    assert on.module_ckpt and on.recompute_early_stop
    assert not off.module_ckpt and not off.recompute_early_stop
    assert module_ckpt_on(Deployment(train=TrainLayout(ckpt="full", module_ckpt=True)),
                          TrainLayout(ckpt="full", module_ckpt=True))  # fmt: skip
    with pytest.raises(SpecError, match="--ckpt full"):
        step_options(dep(zero="3", module_ckpt=True))
    with pytest.raises(SpecError, match="Megatron-core"):
        step_options(dep(zero="1", tp=2, ckpt="full", module_ckpt=True))
    run = Run.from_data({"algorithm": {"name": "grpo", "rule_reward": True},
                         "models": {"actor": "llama-3.2-1b"},
                         "deployment": {"framework": "nemo-rl", "train": {
                             "zero": "3", "ckpt": "full", "module_ckpt": False}},
                         "cluster": {"hardware": "h100-sxm"}})  # fmt: skip
    assert "--no-module-ckpt" in to_command(run).split()


def test_v2_prices_the_rerun_whole() -> None:
    """The imported v2 query's update is slower than v1's per-module rerun (o_proj, down_proj
    and the adds rerun), its activations fewer (one tensor kept per layer and token)."""
    from typer.testing import CliRunner

    from rlmcost.cli import app

    def run(*extra: str) -> tuple[float, int]:
        import json

        res = CliRunner().invoke(app, ["grpo", "-m", "llama-3.1-8b", "--framework", "nemo-rl",
                                       "--gpus", "8", "--ckpt", "full", "--json", *extra])
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        update = {p["name"]: p["time_s"] for p in out["phases"]}["update actor"]
        return update, out["stages"]["training"]["memory_breakdown_bytes"]["activations"]

    v1, v2 = run("--module-ckpt"), run("--no-module-ckpt", "--no-recompute-early-stop")
    assert v1[0] < v2[0] and v2[1] < v1[1]
    assert run() == v2  # the preset's worker: v2 (grpo_math_1B.yaml's _v2: true)


@pytest.mark.parametrize("model", ["gpt-oss-20b", "moonlight-16b-a3b", "kimi-k2"])
def test_v2_runs_automodels_gpt_oss_and_deepseek_v3_classes(model: str) -> None:
    # Automodel's registry (nemo_automodel/_transformers/registry.py @24b47e85) maps
    # GptOssForCausalLM and DeepseekV3ForCausalLM (Moonlight's and Kimi-K2's architectures) to
    # its own MoE classes, whose adapters implement convert_single_tensor_to_hf
    flags, notes = _import(CKPT, f"policy.model_name={model}", f"+{C}._v2=true")
    assert "--no-module-ckpt" in flags and "--no-recompute-early-stop" not in flags
    assert AUTOMODEL_NOTE.format(model=model) in notes
