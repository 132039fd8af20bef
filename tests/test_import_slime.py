"""`rlmcost import slime`: slime's real launch lines (THUDM/slime scripts at commit 624b824a,
expanded into tests/data/frameworks/slime_*.args) checked field by field against the
scripts' values, unknown arguments listed, bad input refused in one line."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.slime import import_slime, parse_args

DATA = Path(__file__).parent / "data" / "frameworks"
runner = CliRunner()


def _args(name: str) -> list[str]:
    lines = [ln for ln in (DATA / f"slime_{name}.args").read_text().splitlines()
             if ln and not ln.startswith("#")]  # fmt: skip
    return shlex.split(" ".join(lines))


def _flags(q: object) -> dict[str, object]:
    return dict(q.flags)  # type: ignore[attr-defined]


def test_qwen3_4b_colocated_script() -> None:
    # scripts/run-qwen3-4B.sh: 1 node x NUM_GPUS (8), --colocate, TP 2 + SP, full recompute,
    # dynamic batch 9216 tokens, 32 prompts x 8, 8192 response tokens, gbs 256, engines of
    # 2 GPUs at mem fraction 0.7, --use-kl-loss (coef 0), --rm-type deepscaler
    q = import_slime(_args("qwen3-4B"))
    f = _flags(q)
    assert q.algorithm == "rlvr" and "--reward" not in f  # --rm-type deepscaler: a verifier
    assert f["--model"] == "qwen3-4b"
    assert f["--gpus"] == 8 and "--groups" not in f and "--placement" not in f
    assert (f["--tp"], f["--zero"], f["--ckpt"]) == (2, "1", "full") and "--sp" in f
    assert "--pp" not in f and "--cp" not in f and "--ep" not in f
    assert (f["--batch"], f["--group"], f["--response-len"]) == (32, 8, 8192)
    assert "--mini-batches" not in f  # 256 samples / gbs 256 = 1 step
    assert f["--max-tokens-per-gpu"] == 9216
    assert (f["--engine"], f["--rollout-tp"], f["--gpu-memory-utilization"]) == ("sglang", 2, 0.7)
    # --colocate turns offload_train and offload_rollout on (slime_validate_args)
    assert f["--offload"] == "optimizer-idle,params-idle,grads-idle"
    assert "--sleep" in f and "--no-sleep" not in f
    assert "--kl" in f and "--offload-idle" in f
    assert "--no-recompute-logprobs" in f  # one step per rollout: can_reuse_log_probs_in_loss
    assert f["--max-num-seqs"] == 512  # slime's request semaphore per engine (default)
    assert q.ignored == []


def test_qwen3_30b_a3b_script_moe_and_cpu_adam() -> None:
    # scripts/run-qwen3-30B-A3B.sh: 8 GPUs colocated, TP 4, EP 8, ETP 1, engines of 8 GPUs,
    # --optimizer-cpu-offload, max 20480 tokens per GPU
    q = import_slime(_args("qwen3-30B-A3B"))
    f = _flags(q)
    assert f["--model"] == "qwen3-30b-a3b" and f["--gpus"] == 8
    assert (f["--tp"], f["--ep"], f["--etp"], f["--rollout-tp"]) == (4, 8, 1, 8)
    assert f["--max-tokens-per-gpu"] == 20480
    assert f["--offload"] == "params-idle,grads-idle,optimizer"  # CPU Adam: kept on the host
    assert q.ignored == ["--sglang-cuda-graph-bs"]
    assert not any("differ from" in n for n in q.notes)  # the Megatron shape is Qwen3-30B-A3B's


def test_deepseek_r1_script_multi_node() -> None:
    # scripts/run-deepseek-r1.sh: 16 nodes x 8, TP 8, PP 4, CP 4, EP 32, ETP 1, engines of 64
    # GPUs, 128 prompts x 8, 32768 response tokens, --num-steps-per-rollout 4, EAGLE 3 steps
    q = import_slime(_args("deepseek-r1"))
    f = _flags(q)
    assert f["--model"] == "deepseek-r1" and f["--gpus"] == 128
    assert (f["--tp"], f["--pp"], f["--cp"], f["--ep"], f["--etp"]) == (8, 4, 4, 32, 1)
    assert (f["--batch"], f["--group"], f["--response-len"]) == (128, 8, 32768)
    assert f["--mini-batches"] == 4 and f["--rollout-tp"] == 64
    assert "--recompute-logprobs" in f  # 4 steps per rollout: the old log-probs recomputed
    assert (f["--speculative-tokens"], f["--speculative-draft"]) == (3, "mtp")
    # --decoder-last-pipeline-num-layers 13: Megatron's uneven split, 61 = 16 + 16 + 16 + 13
    assert f["--pp-last-layers"] == 13 and "--pp-first-layers" not in f
    assert "--dynamic-sampling-filter-path" not in q.ignored
    assert f["--max-num-seqs"] == 1024  # --sglang-server-concurrency 1024 per engine
    assert f["--dp-attention"] == 8  # --sglang-enable-dp-attention --sglang-dp-size 8
    assert "--sglang-enable-dp-attention" not in q.ignored and "--sglang-ep-size" not in q.ignored


def test_glm4_9b_script_engines_apart() -> None:
    # scripts/run-glm4-9B.sh: 4 actor GPUs beside --rollout-num-gpus 4 (engines of 2), CP 2;
    # GLM-Z1-9B-0414 is the built-in glm-4-9b-0414, whose shape the script's Megatron model
    # arguments (scripts/models/glm4-9B.sh) confirm: no note of a difference
    own = import_slime(_args("glm4-9B"))
    assert _flags(own)["--model"] == "glm-4-9b-0414"
    assert not any("Megatron model arguments differ" in n for n in own.notes)
    q = import_slime(_args("glm4-9B"), model="qwen2.5-7b")  # --model overrides
    f = _flags(q)
    assert f["--groups"] == "rollout=4[tp=2],actor+reference=4" and f["--gpus"] == 8
    assert (f["--tp"], f["--cp"]) == (2, 2) and "--no-sleep" in f
    assert f["--offload"] == ""  # not colocated: offload_train off
    assert any("--num-layers 40 (model: 28)" in n for n in q.notes)


def test_external_engines_and_disk_weight_sync() -> None:
    # --rollout-external-engine-addrs: slime sums the servers' GPUs into rollout_num_gpus
    # (slime/backends/sglang_utils/external.py apply_external_engine_info_to_args); from the
    # launch line, --rollout-num-gpus-per-engine each. --update-weight-transport disk: a
    # checkpoint on shared storage every engine reloads (rlmcost's --refit disk)
    base = ["--hf-checkpoint", "Qwen3-4B", "--rollout-batch-size", "8", "--n-samples-per-prompt",
            "4", "--actor-num-gpus-per-node", "4", "--rollout-num-gpus-per-engine", "2",
            "--rollout-external-engine-addrs", "e1:30000", "e2:30000", "e3:30000"]  # fmt: skip
    q = import_slime(base)
    f = _flags(q)
    assert f["--groups"] == "rollout=6[tp=2],actor=4"
    assert f["--gpus"] == 4 + 3 * 2 and "--refit" not in f  # nccl by default
    assert any("3 engines launched outside slime" in n for n in q.notes)
    assert q.ignored == []
    disk = _flags(import_slime([*base, "--update-weight-transport", "disk"]))
    assert disk["--refit"] == "disk"
    delta = import_slime([*base, "--update-weight-transport", "disk",
                          "--update-weight-mode", "delta"])  # fmt: skip
    assert _flags(delta)["--refit"] == "disk"
    assert any("an upper bound" in n for n in delta.notes)
    with pytest.raises(SpecError, match="drop --colocate"):
        import_slime([*base, "--colocate"])


def test_train_async_entry_is_async_one_step_behind() -> None:
    # train_async.py: the next rollout generates while this one trains; refuses --colocate
    argv = ["python3", "train_async.py", *_args("glm4-9B")[2:]]
    q = import_slime(argv, model="qwen2.5-7b")
    f = _flags(q)
    assert (f["--placement"], f["--staleness"]) == ("async", 1)
    assert q.source == "train_async.py arguments"
    with pytest.raises(SpecError, match="Colocation is not supported"):
        import_slime(["train_async.py", *_args("qwen3-4B")[2:]])


def test_prefix_and_unknown_arguments() -> None:
    argv = ["ray", "job", "submit", "--address=http://x", "--", "python3", "/s/train.py",
            "--hf-checkpoint", "/m/Qwen3-4B", "--rollout-batch-size", "4", "--colocate",
            "--n-samples-per-prompt", "2", "--my-new-flag", "3", "--another"]  # fmt: skip
    args, is_async = parse_args(argv)
    assert not is_async and args["my-new-flag"] == "3" and args["another"] is True
    q = import_slime(argv)
    assert q.ignored == ["--another", "--my-new-flag"]
    f = _flags(q)
    assert (f["--batch"], f["--group"]) == (4, 2)
    # no --global-batch-size: Megatron's default, micro-batch 1 x 8 data-parallel ranks
    steps = [c for c in q.conversions if c.flag == "--mini-batches"]
    assert [c.value for c in steps] == [1] and "1 x 8 = 8 samples" in steps[0].how


def test_negatable_offload_and_ppo_critic() -> None:
    base = ["--hf-checkpoint", "Qwen3-4B", "--rollout-batch-size", "16", "--colocate",
            "--n-samples-per-prompt", "4"]
    f = _flags(import_slime([*base, "--no-offload-train", "--no-offload-rollout"]))
    assert f["--offload"] == "" and "--no-sleep" in f
    # engines apart: offload only when asked (--offload = --offload-train + --offload-rollout)
    apart = [*base[:4], *base[5:], "--rollout-num-gpus", "8"]
    f = _flags(import_slime(apart))
    assert f["--offload"] == "" and "--no-sleep" in f
    q = import_slime([*apart, "--offload", "--partial-rollout"])
    f = _flags(q)
    assert f["--offload"] == "optimizer-idle,params-idle,grads-idle" and "--sleep" in f
    assert "--partial-rollout" not in f and q.ignored == []  # streams under train_async.py only
    # SGLang's own request cap where it is lower than slime's semaphore
    q = import_slime([*apart, "--rollout-num-gpus-per-engine", "4", "--sglang-ep-size", "4",
                      "--sglang-max-running-requests", "128"])  # fmt: skip
    f = _flags(q)
    assert f["--groups"] == "rollout=8[tp=4],actor=8" and f["--max-num-seqs"] == 128
    assert any("--sglang-ep-size" in n for n in q.notes) and q.ignored == []
    q = import_slime(["--hf-checkpoint", "Qwen3-4B", "--rollout-batch-size", "16",
                      "--rollout-num-gpus", "4", "--advantage-estimator", "ppo"])  # fmt: skip
    assert (_flags(q)["--group"], q.ignored) == (1, [])  # ppo: one sample per prompt is fine
    f = _flags(q)
    assert q.algorithm == "vapo" and f["--groups"] == "rollout=4[tp=1],actor+critic=8"
    assert f["--offload"] == "optimizer-idle,params-idle,grads-idle"  # use_critic forces it


def test_cli_runs_the_script_as_json() -> None:
    result = runner.invoke(app, ["import", "slime", "--json", "--", *_args("qwen3-4B")])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout[result.stdout.index("{") :])
    assert out["query"]["framework"] == "slime"
    assert out["query"]["argv"][:3] == ["rlvr", "--framework", "slime"]
    assert out["deployment"]["engine"]["tp"] == 2
    assert out["deployment"]["train"]["zero"] == "1"


BAD = [
    (["--rollout-batch-size", "abc"], "--rollout-batch-size 'abc' is not a number"),
    (["--hf-checkpoint", "Qwen3-4B", "--colocate"], "give --rollout-batch-size"),
    (["--hf-checkpoint", "Qwen3-4B", "--rollout-batch-size", "10", "--colocate",
      "--global-batch-size", "3"], "does not divide"),
    (["--hf-checkpoint", "Qwen3-4B", "--rollout-batch-size", "8", "--colocate",
      "--colocate=yes"], "--colocate is a switch"),
    (["--hf-checkpoint", "Qwen3-4B", "--rollout-batch-size", "8", "--colocate",
      "--use-dynamic-batch-size"], "needs --max-tokens-per-gpu"),
    (["--hf-checkpoint", "Qwen3-4B", "--rollout-batch-size", "8", "--colocate",
      "--advantage-estimator", "magic"], "'advantage-estimator'='magic' is not one of"),
    (["--hf-checkpoint", "Qwen3-4B", "--rollout-batch-size", "8"], "give --rollout-num-gpus"),
    (["--hf-checkpoint", "Qwen3-4B", "--rollout-batch-size", "8", "--rollout-num-gpus", "3",
      "--rollout-num-gpus-per-engine", "2"], "not a multiple of --rollout-num-gpus-per-engine"),
    (["--hf-checkpoint", "Qwen3-4B", "--rollout-batch-size", "8", "--colocate",
      "--tensor-model-parallel-size", "3"], "not a multiple of tensor"),
    (["--hf-checkpoint", "/nowhere/NoSuchModel", "--rollout-batch-size", "8", "--colocate"],
     "is not a built-in model"),
    (["--hf-checkpoint", "Qwen3-4B", "--rollout-batch-size", "8", "--colocate",
      "--n-samples-per-prompt=1"], "--n-samples-per-prompt 1 with --advantage-estimator grpo"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "message"), BAD)
def test_bad_input_is_one_line(argv: list[str], message: str) -> None:
    result = runner.invoke(app, ["import", "slime", "--", "--n-samples-per-prompt", "2", *argv])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and message in lines[0], result.stderr


def test_checkpoint_folder_config_and_cli_options(tmp_path: Path) -> None:
    # --hf-checkpoint naming a folder with a config.json on this machine: that config
    ckpt = tmp_path / "MyModel"
    ckpt.mkdir()
    (ckpt / "config.json").write_text((Path(__file__).parent / "data" / "models" /
                                       "llama-1b-mtp.json").read_text())  # fmt: skip
    q = import_slime(["--hf-checkpoint", str(ckpt), "--rollout-batch-size", "8", "--colocate",
                      "--rollout-max-prompt-len", "512", "--n-samples-per-prompt", "2"])
    f = _flags(q)
    assert f["--model"] == str(ckpt) and f["--prompt-len"] == 512
    # the CLI's --model and --prompt-len: the model replaces --hf-checkpoint's, S is given
    argv = ["import", "slime", "--json", "-m", "qwen3-1.7b", "--prompt-len", "300", "--",
            "--hf-checkpoint", "/x/GLM-Z1-9B-0414", "--rollout-batch-size", "8", "--colocate",
            "--n-samples-per-prompt", "2"]
    result = runner.invoke(app, argv)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout[result.stdout.index("{") :])
    assert out["estimate"]["model"] == "qwen3-1.7b"
    assert "--prompt-len" in out["query"]["argv"] and "300" in out["query"]["argv"]


def test_quantized_rollout_checkpoint(tmp_path) -> None:
    # slime docs/en/advanced/low-precision.md @624b824a8: --hf-checkpoint names a blockwise FP8
    # checkpoint SGLang serves while Megatron trains BF16 -> --rollout-dtype fp8; an INT4 one
    # 4-bit routed experts (--rollout-weights), a dense model's kept bf16
    base = ["--rollout-batch-size", "8", "--n-samples-per-prompt", "4",
            "--actor-num-gpus-per-node", "4", "--rollout-num-gpus-per-engine", "2",
            "--rollout-num-gpus", "4"]  # fmt: skip
    fp8 = import_slime(["--hf-checkpoint", "/root/Qwen3-4B-FP8", *base])
    assert _flags(fp8)["--model"] == "qwen3-4b" and _flags(fp8)["--rollout-dtype"] == "fp8"
    assert any(c.flag == "--rollout-dtype" and "folder name" in c.how for c in fp8.conversions)
    int4 = import_slime(["--hf-checkpoint", "/root/Qwen3-4B-INT4", *base])
    assert _flags(int4)["--model"] == "qwen3-4b" and "--rollout-dtype" not in _flags(int4)
    # a dense model: tools/convert_hf_to_int4_direct.py's ignore rules keep its layers bf16
    assert "--rollout-weights" not in _flags(int4)
    assert any("a int4 rollout checkpoint" in n and "dense" in n for n in int4.notes)
    # an MoE model: its routed experts INT4, group 32 (the converter's defaults)
    moe = import_slime(["--hf-checkpoint", "/root/Qwen3-30B-A3B-INT4", *base])
    assert _flags(moe)["--rollout-weights"] == "int4-g32:experts"
    plain = import_slime(["--hf-checkpoint", "/root/Qwen3-4B", *base])
    assert "--rollout-dtype" not in _flags(plain)
    # a checkpoint on this machine: its config.json's quantization_config decides
    ckpt = tmp_path / "qwen3-4b-rl"
    ckpt.mkdir()
    config = {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 2560,
        "intermediate_size": 9728, "num_hidden_layers": 36, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
        "max_position_embeddings": 40960, "tie_word_embeddings": True,
        "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}
    (ckpt / "config.json").write_text(json.dumps(config))
    local = import_slime(["--hf-checkpoint", str(ckpt), *base])
    assert _flags(local)["--rollout-dtype"] == "fp8"
    assert any("config.json quantization_config" in c.how for c in local.conversions)


LAUNCH = ("python3 train.py --actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate "
          "--rollout-batch-size 32 --n-samples-per-prompt 8 --rollout-max-response-len 1024 "
          "--global-batch-size 256 --tensor-model-parallel-size 8").split()  # fmt: skip
#: THUDM/slime scripts/models/*.sh @624b824a, the shape arguments the import checks, with the
#: script's --hf-checkpoint folder
SLIME_MODELS = {
    "mimo-7b": "--hf-checkpoint /root/MiMo-7B-RL --num-layers 36 --hidden-size 4096 "
    "--ffn-hidden-size 11008 --num-attention-heads 32 --group-query-attention "
    "--num-query-groups 8 --vocab-size 151680",
    "moonlight-16b-a3b": "--hf-checkpoint /root/Moonlight-16B-A3B --num-layers 27 "
    "--hidden-size 2048 --ffn-hidden-size 11264 --num-attention-heads 16 --vocab-size 163840 "
    "--multi-latent-attention --kv-lora-rank 512 --num-experts 64 --moe-ffn-hidden-size 1408 "
    "--moe-router-topk 6",
    "kimi-k2": "--hf-checkpoint /root/Kimi-K2-Instruct --num-layers 61 --hidden-size 7168 "
    "--ffn-hidden-size 18432 --num-attention-heads 64 --vocab-size 163840 "
    "--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --num-experts 384 "
    "--moe-ffn-hidden-size 2048 --moe-router-topk 8",
    "kimi-k2-thinking": "--hf-checkpoint /root/Kimi-K2-Thinking --num-layers 61 "
    "--hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 64 --vocab-size 163840 "
    "--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --num-experts 384 "
    "--moe-ffn-hidden-size 2048 --moe-router-topk 8",
}


@pytest.mark.parametrize("name", sorted(SLIME_MODELS))
def test_slime_model_scripts_agree_with_the_builtins(name: str) -> None:
    # slime's Megatron model arguments for these checkpoints are the built-in's shape: the
    # checkpoint folder resolves to it and no difference is noted
    q = import_slime(LAUNCH + SLIME_MODELS[name].split())
    assert _flags(q)["--model"] == name
    assert not any("Megatron model arguments differ" in n for n in q.notes)


def test_no_bias_swiglu_fusion_turns_the_fused_swiglu_off() -> None:
    """Megatron-LM's ``--no-bias-swiglu-fusion`` (store_false, dest bias_swiglu_fusion, on by
    default: megatron/training/arguments.py), which core_transformer_config_from_args hands to
    TransformerConfig.bias_activation_fusion: the trainer keeps the unfused act(gate) * up, 4
    d_ff a token for the backward instead of the fused SwiGLUFunction's 3
    (rlmcost.placement.glu_kernel). It had been an ignored key, the fusion left on."""
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.evaluation.deployment import evaluate_deployment

    args = _args("qwen3-4B")[2:]
    plain, off = import_slime(args), import_slime([*args, "--no-bias-swiglu-fusion"])
    assert "--no-swiglu-fusion" in _flags(off) and "--no-swiglu-fusion" not in _flags(plain)
    assert off.ignored == [] and "--swiglu-fusion" not in _flags(off)
    runs = [run_from_argv(q.algorithm, q.argv()) for q in (plain, off)]
    assert [r.deployment.train.swiglu_fusion for r in runs] == [None, False]
    fused, unfused = (max(j.memory.activations for g in evaluate_deployment(r).groups
                          for j in g.jobs) for r in runs)  # fmt: skip
    assert unfused > fused  # one more d_ff a token kept in the recomputed layer's backward


def test_mtp_training_is_priced() -> None:
    # scripts/run-mimo-7B-rl-eagle.sh, run-glm4.7-30B-A3B.sh: --enable-mtp-training (slime
    # @624b824a): Megatron trains the MTP layers beside the model (rlmcost.placement.mtp)
    q = import_slime(_args("qwen3-4B") + ["--enable-mtp-training", "--mtp-num-layers", "2",
                                          "--mtp-loss-scaling-factor", "0.2"])  # fmt: skip
    assert ("--mtp-layers", 2) in q.flags
    assert not any("mtp" in k for k in q.ignored)
