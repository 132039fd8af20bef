"""What a colocated trainer gathers to refit its engine under LoRA (rlmcost.placement.lora_gather).

Independent references: the parameter count of transformers' Qwen2ForCausalLM built from
Qwen2.5-7B's config on the meta device (what FSDP1's ``summon_full_params`` unshards), and
verl's own launch script for its 7B LoRA tuning example
(examples/tuning/7b/qwen2-7b_grpo-lora_1_h100_fsdp_vllm.sh, committed as
tests/data/scripts/verl_qwen2-7b_grpo-lora_1_h100.sh), read by the importer
as verl/utils/fsdp_utils.py ``collect_lora_params`` runs it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app

DATA = Path(__file__).parent / "data" / "frameworks"
SCRIPT = Path(__file__).parent / "data" / "scripts" / "verl_qwen2-7b_grpo-lora_1_h100.sh"
runner = CliRunner()
QUERY = ["grpo", "-m", "qwen2.5-7b", "-H", "h100", "--gpus", "1", "-B", "8", "-K", "4",
         "-S", "256", "-T", "512", "--framework", "verl", "--lora-rank", "32", "--param-dtype",
         "fp32", "--zero", "3", "--offload", "params-idle,optimizer-idle",
         "--gpu-memory-utilization", "0.25", "--rollout-tp", "1", "--json"]  # fmt: skip


def _generation(*extra: str) -> dict:
    res = runner.invoke(app, [*QUERY, *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout[res.stdout.index("{"):])["stages"]["generation"]


def _params(**config: int) -> int:
    """Parameters of transformers' Qwen2ForCausalLM of this config, built on the meta device."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    with torch.device("meta"):
        model = transformers.Qwen2ForCausalLM(transformers.Qwen2Config(
            vocab_size=152064, tie_word_embeddings=False, **config))  # fmt: skip
    return sum(p.numel() for p in model.parameters())


def test_the_whole_model_against_one_unit_is_every_fp32_parameter_but_the_embedding() -> None:
    params = _params(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                     num_attention_heads=28, num_key_value_heads=4)  # Qwen2.5-7B's config
    assert params == 7_615_616_512  # source: transformers' model class
    model, layers, adapters = (_generation("--lora-gather", how)
                               for how in ("model", "layers", "adapters"))  # fmt: skip
    buffers = [s["memory_breakdown_bytes"]["buffers"] for s in (model, layers, adapters)]
    # fp32 parameters (--param-dtype fp32, as FSDP1 summons them); the largest unit of one
    # layer at a time is the embedding, 152,064 x 3,584
    assert buffers[0] - buffers[1] == 4 * (params - 152064 * 3584) == 28_282_476_544
    assert buffers[2] == 0  # the adapters alone: nothing priced
    assert model["binding_term"] == "buffers"
    # verl's default (FSDP1 without layered_summon) is the whole model
    default = _generation()
    assert default["memory_bytes_per_device"] == model["memory_bytes_per_device"]


def _framework(name: str, *extra: str) -> dict:
    """QUERY under framework ``name`` with its bf16 trainer and no offload (verl's), ``extra``
    over its ZeRO stage."""
    query = [*QUERY]
    del query[query.index("--offload"):query.index("--offload") + 2]
    query[query.index("verl")] = name
    query[query.index("--param-dtype") + 1] = "bf16"
    if "--zero" in extra:
        query[query.index("--zero") + 1] = extra[extra.index("--zero") + 1]
        extra = tuple(w for i, w in enumerate(extra)
                      if "--zero" not in extra[max(0, i - 1):i + 1])  # fmt: skip
    res = runner.invoke(app, [*query, *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout[res.stdout.index("{"):])["stages"]["generation"]


def test_trl_gathers_a_peft_model_whole_under_zero_3_after_waking_the_weights() -> None:
    params = _params(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                     num_attention_heads=28, num_key_value_heads=4)
    whole = _framework("trl", "--lora-gather", "model")
    default = _framework("trl")
    assert default == whole  # TRL's default at ZeRO-3 (DeepSpeed): the whole model
    one = _framework("trl", "--lora-gather", "adapters")
    # TRL's refit otherwise, one full tensor at a time: the largest, the embedding in bf16
    assert one["memory_breakdown_bytes"]["buffers"] == 152064 * 3584 * 2
    # TRL's engine does not sleep by default (vllm_enable_sleep_mode false): the whole model
    # in bf16 on top of everything, exactly 2 B x transformers' parameter count
    assert whole["memory_breakdown_bytes"]["buffers"] == 2 * params
    slept = _framework("trl", "--sleep")  # the weights woken first, the pool not yet
    assert 0 < slept["memory_breakdown_bytes"]["buffers"] < 2 * params


def test_trls_server_mode_gathers_on_the_trainers_after_the_update() -> None:
    params = _params(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                     num_attention_heads=28, num_key_value_heads=4)
    apart = ["--gpus", "3", "--placement", "hybrid", "--groups", "rollout=1,actor=2"]
    query = [*QUERY]
    del query[query.index("--offload"):query.index("--offload") + 2]
    query[query.index("verl")] = "trl"
    query[query.index("--param-dtype") + 1] = "bf16"
    del query[query.index("--gpus"):query.index("--gpus") + 2]
    stages = []
    for how in ("model", "adapters"):
        res = runner.invoke(app, [*query, *apart, "--lora-gather", how])
        assert res.exit_code == 0, res.output
        stages.append(json.loads(res.stdout[res.stdout.index("{"):])["stages"])
    whole, one = (s["training"] for s in stages)
    # after the update every trainer GPU holds its bf16 shard and the whole bf16 model
    assert whole["memory_bytes_per_device"] >= 2 * params + 2 * params // 2
    assert one["memory_bytes_per_device"] < 2 * params + 2 * params // 2  # its update's peak
    assert whole["binding_term"] == "buffers"
    # the engine's GPU gathers nothing: the generation stage is the same
    assert stages[0]["generation"] == stages[1]["generation"]


def test_below_zero_3_nothing_is_gathered() -> None:
    for how in ("model", "adapters"):  # the parameters are whole on every GPU already
        a = _framework("trl", "--zero", "2", "--lora-gather", how)
        assert a["memory_breakdown_bytes"]["buffers"] == 152064 * 3584 * 2  # its refit alone


def test_other_frameworks_gather_the_adapters() -> None:
    out = _framework("openrlhf")
    assert out["memory_breakdown_bytes"]["buffers"] <= 152064 * 3584 * 2


def test_the_gather_needs_lora() -> None:
    res = runner.invoke(app, [*QUERY[:QUERY.index("--lora-rank")], "--lora-gather", "model"])
    assert res.exit_code != 0
    assert "--lora-gather needs --lora-rank" in res.output and "Traceback" not in res.output


def test_trls_import_reads_its_zero_3_backend() -> None:
    from rlmcost.frameworks.trl import import_trl

    config, accelerate = DATA / "trl_grpo.yaml", DATA / "trl_accelerate_zero3.yaml"
    q = import_trl(config, ["use_peft=true"], accelerate)
    assert q.argv()[q.argv().index("--lora-gather") + 1] == "model"
    assert any("PEFT under ZeRO-3" in n for n in q.notes)
    assert "--lora-gather" not in import_trl(config, [], accelerate).argv()


def test_verls_tuning_script_imports_its_gather() -> None:
    from verl_rows import import_verl_json

    buffers = {}
    for extra, how in (((), "layers"),  # the script's layered_summon=True
                       (("actor_rollout_ref.rollout.layered_summon=False",), "model"),
                       (("actor_rollout_ref.actor.strategy=fsdp2",), "adapters")):
        out = import_verl_json(SCRIPT, *extra, hardware="h100")
        argv = out["query"]["argv"]
        assert argv[argv.index("--lora-gather") + 1] == how
        assert out["run"]["deployment"]["lora"]["gather"] == how
        assert any(n.startswith("LoRA refit:") for n in out["query"]["notes"])
        stage = out["estimate"]["stages"]["generation"]
        buffers[how] = stage["memory_breakdown_bytes"]["buffers"]
    # Qwen2.5-7B's fp32 parameters but its largest unit (the embedding, 152,064 x 3,584),
    # unsharded on its one H100: 7,615,616,512 from transformers' model class
    assert buffers["model"] - buffers["layers"] == 4 * (_params(
        hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
        num_attention_heads=28, num_key_value_heads=4) - 152064 * 3584)  # fmt: skip
    assert buffers["adapters"] < buffers["layers"] < buffers["model"]
