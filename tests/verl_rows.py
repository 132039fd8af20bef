"""The verl colocated Qwen2.5-Math-7B DAPO row's command (rl_runs.json
verl-fully-async-doc-qwen2.5-math-7b-dapo-colocate-sync-32gpu: 32 H20, Ulysses 4, fsdp_size 2,
28,672-token cap), shared by the verl memory and dynamic-batching tests."""

QWEN_DAPO = ["--framework", "verl", "--model", "qwen2.5-7b", "--no-kl", "--mini-batches", "16",
             "--zero", "3", "--param-dtype", "fp32", "--cp", "4", "--zero-shard", "2",
             "--offload", "params-idle,optimizer-idle", "--ckpt", "full", "--logits",
             "low-memory", "--max-tokens-per-gpu", "61440", "--forward-max-tokens-per-gpu",
             "92160", "--offload-idle", "--rollout-tp", "4", "--gpu-memory-utilization", "0.8",
             "--sleep", "--max-num-batched-tokens", "30720", "--batch", "512", "--group", "16",
             "--prompt-len", "200", "--response-len", "28672", "--hardware", "h20", "--gpus",
             "32"]  # fmt: skip
"""The row's flags without its length distribution."""
