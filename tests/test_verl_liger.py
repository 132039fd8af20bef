"""verl's ``actor_rollout_ref.model.use_liger`` as ``--trainer-kernels liger``
(rlmcost.frameworks.verl_glu ``import_liger``; placement.pass_options ``liger_layers``).

Sources: verl's FSDP workers call ``_apply_liger_kernel_to_instance(model=actor_module)`` after
``from_pretrained`` for the actor and the reference (verl/workers/fsdp_workers.py
``_build_model_optimizer`` @b178a3cd); its Megatron workers and its critic read no such key.
Liger's defaults then patch RMSNorm, RoPE and the MLP (``LigerSwiGLUMLP``), whose
``LigerSiLUMulFunction`` saves gate and up alone (linkedin/Liger-Kernel
src/liger_kernel/ops/swiglu.py ``ctx.save_for_backward(a, b)``) where transformers' MLP keeps
gate, up, act(gate) and their product: one d_ff element a token and layer fewer. Liger's
``lce_forward`` skips the logits only in training with labels (transformers/model/llama.py
@ead96b61), and verl's actor passes none (verl/workers/actor/dp_actor.py
``_forward_micro_batch``): the logits stay. Qwen2.5-7B: 28 layers, d_ff 18,944 (its config.json).
The config: tests/data/frameworks/verl_grpo.yaml (micro-batches of 40 sequences of 512 + 1,024
tokens on 8 GPUs, ZeRO-3, bf16 activations).
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner
from verl_rows import import_verl_json

from rlmcost.cli import app
from rlmcost.deployment.spec import Deployment
from rlmcost.placement.pass_options import step_options
from rlmcost.run.spec import Run

runner = CliRunner()
DATA = Path(__file__).parent / "data"
GRPO = DATA / "frameworks" / "verl_grpo.yaml"
MEGATRON = DATA / "scripts" / "verl_qwen2-32b_grpo_8_h20_megatron.sh"
KEY = "actor_rollout_ref.model.use_liger"
NO_CKPT = "actor_rollout_ref.model.enable_gradient_checkpointing=False"


def _import(config: Path, *extra: str) -> dict:
    return import_verl_json(config, *extra, hardware="h100")


def _phase(out: dict, name: str) -> float:
    return next(p["time_s"] for p in out["estimate"]["phases"] if p["name"] == name)


def test_use_liger_keeps_3_d_ff_a_token_and_no_eager_layers() -> None:
    plain = _import(GRPO, NO_CKPT)
    liger = _import(GRPO, NO_CKPT, f"{KEY}=True")
    argv = " ".join(liger["query"]["argv"])
    assert "--trainer-kernels liger" in argv and "--trainer-kernels" not in \
        " ".join(plain["query"]["argv"])  # fmt: skip
    assert KEY not in liger["query"]["ignored_keys"]
    assert liger["run"]["deployment"]["train"]["kernels"] == "liger"
    acts = [o["estimate"]["stages"]["training"]["memory_breakdown_bytes"]["activations"]
            for o in (plain, liger)]  # fmt: skip
    # one d_ff bf16 element fewer a token and layer, every layer kept (no recomputation):
    # 40 sequences x 1,536 tokens x 28 layers x 18,944 x 2 bytes
    assert acts[0] - acts[1] == 40 * 1536 * 28 * 18944 * 2 == 65_179_484_160
    # the eager RMSNorm, RoPE and SiLU x up leave the actor's passes (the reference's too)
    for phase in ("update actor", "old log-prob", "reference"):
        assert _phase(liger, phase) < _phase(plain, phase)
    # the logits are still materialized: --logits as use_fused_kernels says
    assert liger["run"]["deployment"]["logits"] == plain["run"]["deployment"]["logits"]
    run = Run.from_data(liger["run"])
    assert "--trainer-kernels liger" in run.to_command()
    assert Run.from_data(json.loads(json.dumps(run.to_json()))) == run


def test_a_critic_is_not_patched_and_says_so() -> None:
    out = _import(GRPO, "algorithm.adv_estimator=gae", f"{KEY}=True")
    assert any("critic is built without Liger" in n for n in out["query"]["notes"])


def test_megatron_workers_do_not_read_it() -> None:
    out = _import(MEGATRON, f"+{KEY}=True")
    assert "--trainer-kernels" not in " ".join(out["query"]["argv"])
    assert any(f"{KEY}=true" in n and "Megatron workers do not read it" in n
               for n in out["query"]["notes"])  # fmt: skip


def test_liger_needs_a_hugging_face_trainer() -> None:
    # verl's FSDP layout (TP, PP and EP 1): Liger's layers, no eager ones
    opt = step_options(Deployment(framework="verl", train={"kernels": "liger"}))
    assert opt is not None and not opt.hf_eager
    plain = step_options(Deployment(framework="verl"))
    assert plain is not None and plain.hf_eager
    base = ["grpo", "-m", "qwen2.5-7b", "--gpus", "8"]
    for extra in (["--framework", "verl", "--tp", "2"], ["--framework", "none"]):
        res = runner.invoke(app, [*base, *extra, "--trainer-kernels", "liger"])
        assert res.exit_code != 0, extra
        assert "liger patches a Hugging Face model" in res.output
        assert "Traceback" not in res.output
