"""verl fixtures shared by the verl tests: the colocated Qwen2.5-Math-7B DAPO row's command
(rl_runs.json verl-fully-async-doc-qwen2.5-math-7b-dapo-colocate-sync-32gpu: 32 H20, Ulysses 4,
fsdp_size 2, 28,672-token cap) and a small verl config (ppo_trainer.yaml keys)."""

QWEN_DAPO = ["--framework", "verl", "--model", "qwen2.5-7b", "--no-kl", "--mini-batches", "16",
             "--zero", "3", "--param-dtype", "fp32", "--cp", "4", "--zero-shard", "2",
             "--offload", "params-idle,optimizer-idle", "--ckpt", "full", "--logits",
             "low-memory", "--max-tokens-per-gpu", "61440", "--forward-max-tokens-per-gpu",
             "92160", "--offload-idle", "--rollout-tp", "4", "--gpu-memory-utilization", "0.8",
             "--sleep", "--max-num-batched-tokens", "30720", "--batch", "512", "--group", "16",
             "--prompt-len", "200", "--response-len", "28672", "--hardware", "h20", "--gpus",
             "32"]  # fmt: skip
"""The row's flags without its length distribution."""

R = "actor_rollout_ref.rollout"
CONFIG = {
    "actor_rollout_ref.model.path": "Qwen/Qwen2.5-7B",
    "data.train_batch_size": 64, "data.max_prompt_length": 512,
    "data.max_response_length": 2048, f"{R}.n": 8,
    "actor_rollout_ref.actor.ppo_mini_batch_size": 16,
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": 4, "trainer.n_gpus_per_node": 8,
}  # fmt: skip
"""A small verl config: 64 prompts x 8 responses, mini-batch 16, micro-batch 4 on 8 GPUs."""


def import_verl_json(config: object, *extra: str, hardware: str = "h20") -> dict:
    """``rlmcost import verl CONFIG EXTRA... --hardware H --json``, parsed (the command must
    succeed)."""
    import json

    from typer.testing import CliRunner

    from rlmcost.cli import app

    res = CliRunner().invoke(app, ["import", "verl", str(config), *extra, "--hardware",
                                   hardware, "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout[res.stdout.index("{"):])
