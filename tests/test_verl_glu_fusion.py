"""verl's ``override_transformer_config.bias_activation_fusion`` as the trainer's fused SwiGLU
(``--swiglu-fusion``, ``TrainLayout.swiglu_fusion``; rlmcost.frameworks.verl_glu), and the
rebuilt layer beside the head's backward counted with the same choice (placement.head_peak).

Sources: verl hands the key to Megatron-core's ``TransformerConfig`` over the model bridge's
config (verl/workers/megatron_workers.py ``bridge.set_extra_args`` @b178a3cd; ISEEKYAN/mbridge
mbridge/core/llm_bridge.py ``base_config.update(self.extra_args)`` @10cb17f5); Megatron-core's
field is ``bias_activation_fusion``, default False (transformer_config.py @core_v0.15.0); the
fused ``SwiGLUFunction`` saves its input alone, so the gated FFN keeps 3 d_ff a token where
the unfused ``act(gate) * up`` keeps 4 (fusions/fused_bias_swiglu.py). Qwen2.5-32B: d_ff
27,648, 64 layers (its config.json). The dense script: verl's
examples/grpo_trainer/run_qwen2-32b_grpo_8_h20_megatron.sh (tests/data/scripts, TP 8 with SP,
one 2,048 + 6,144-token sequence a micro-batch, no recomputation). The MoE script verl ships
with the key set: examples/grpo_trainer/run_qwen3-235b_megatron_96gb.sh (true).
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner
from verl_rows import import_verl_json

from rlmcost.cli import app
from rlmcost.frameworks.presets import behaviour
from rlmcost.parallel.breakdown import MemoryBreakdown
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.placement.head_peak import head_apart, rebuilt_layer_bytes
from rlmcost.run.spec import Run
from rlmcost.specs import get_model
from rlmcost.specs.workload import Workload

runner = CliRunner()
DATA = Path(__file__).parent / "data"
DENSE = DATA / "scripts" / "verl_qwen2-32b_grpo_8_h20_megatron.sh"
MOE = DATA / "frameworks" / "verl_run_qwen3-235b_megatron_96gb.sh"
KEY = "actor_rollout_ref.actor.megatron.override_transformer_config.bias_activation_fusion"


def _import(script: Path, *extra: str) -> dict:
    return import_verl_json(script, *extra)


def _flags(out: dict) -> str:
    return " ".join(out["query"]["argv"])


def test_a_dense_script_that_sets_the_fusion_keeps_3_d_ff_a_token() -> None:
    before = _import(DENSE)
    after = _import(DENSE, f"+{KEY}=True")
    assert "swiglu-fusion" not in _flags(before)
    assert "--swiglu-fusion" in _flags(after)
    assert after["run"]["deployment"]["train"]["swiglu_fusion"] is True
    assert before["run"]["deployment"]["train"]["swiglu_fusion"] is None
    acts = [o["estimate"]["stages"]["training"]["memory_breakdown_bytes"]["activations"]
            for o in (before, after)]  # fmt: skip
    # one d_ff / TP bf16 element fewer a token and layer: 8,192 tokens x 64 layers x 27,648 / 8
    # x 2 bytes, the one micro-batch in flight (no pipeline, no recomputation)
    assert acts[0] - acts[1] == 8192 * 64 * 27648 // 8 * 2 == 3_623_878_656
    # the Run round-trips the choice
    run = Run.from_data(after["run"])
    assert run.deployment.train.swiglu_fusion is True
    assert Run.from_data(json.loads(json.dumps(run.to_json()))) == run
    assert "--swiglu-fusion" in run.to_command()


def test_a_moe_script_that_turns_it_off_keeps_4() -> None:
    on = _import(MOE)  # the example sets it true, as the bridge does for Qwen3-MoE
    off = _import(MOE, f"{KEY}=False")
    assert "--swiglu-fusion" in _flags(on) and "--no-swiglu-fusion" in _flags(off)
    assert KEY not in on["query"]["ignored_keys"]  # read, no longer listed as ignored
    t_on, t_off = (o["estimate"]["stages"]["training"]["memory_breakdown_bytes"]["activations"]
                   for o in (on, off))  # fmt: skip
    assert t_off > t_on


def test_the_key_under_verls_fsdp_layout_is_a_note(tmp_path: Path) -> None:
    """TP, PP and EP 1 under the Megatron strategy: the verl preset prices its FSDP worker."""
    script = tmp_path / "run.sh"
    text = DENSE.read_text().replace("tensor_model_parallel_size=8 \\",
                                     "tensor_model_parallel_size=1 \\", 1)  # fmt: skip
    script.write_text(text)
    out = _import(script, f"+{KEY}=True")
    assert "swiglu-fusion" not in _flags(out)
    assert any("bias_activation_fusion=true" in n and "not priced" in n
               for n in out["query"]["notes"])  # fmt: skip


def test_a_hugging_face_trainer_refuses_the_flag() -> None:
    res = runner.invoke(app, ["grpo", "-m", "qwen2.5-7b", "--gpus", "8", "--framework", "verl",
                              "--zero", "3", "--swiglu-fusion"])  # fmt: skip
    assert res.exit_code != 0
    assert "bias_activation_fusion" in res.output and "Traceback" not in res.output


def test_the_rebuilt_layer_beside_the_head_counts_the_fused_glu() -> None:
    """rebuilt_layer_bytes with fused_glu: one d_ff a token fewer (dense Qwen2.5-7B, d_ff
    18,944, TP 1, bf16: 2 x 18,944 bytes a token), as parallel.memory's rebuilt term."""
    arch = get_model("qwen2.5-7b").arch()
    layout = Layout(dp=8, zero=ZeroStage.OS_G_P, ckpt=Checkpointing.FULL)
    wl = Workload()
    unfused = rebuilt_layer_bytes(arch, layout, 1000, wl)
    fused = rebuilt_layer_bytes(arch, layout, 1000, wl, fused_glu=True)
    assert unfused - fused == 1000 * 18944 * 2
    # head_apart takes the smaller rebuilt layer out where the logits are larger
    m = MemoryBreakdown(0, 0, 0, 10**11, 0, 10**11, 0)
    verl = behaviour("verl")
    apart = [m.activations - head_apart(m, verl, arch, layout, 1000, wl, g).activations
             for g in (False, True)]  # fmt: skip
    assert apart == [unfused, fused]
