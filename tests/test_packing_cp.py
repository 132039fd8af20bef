"""Sequence packing under context parallelism without an explicit token budget
(``TrainLayout.token_budget``): NeMo RL packs each data-parallel shard into bins of
``train_mb_tokens`` (its recipes: ``max_total_sequence_length x train_micro_batch_size``)
and context parallelism then splits a packed bin over its ranks
(NVIDIA-NeMo/RL nemo_rl/models/policy/lm_policy.py, ``train``/``get_logprobs``: "we just
shard into DP shards here as Sequence packing allows for CP"), so a GPU holds
``micro_batch x seq_len / cp`` tokens, as the importer converts it
(``rlmcost.frameworks.nemo_rl_batching.packed_tokens_per_gpu``). The default budget had been
``micro_batch x seq_len`` per GPU whatever ``--cp``, so ``--cp 4`` packed four sequences per
micro-batch and left the trainer's activations, logits and the fit unchanged. NeMo RL packs
under CP on its Megatron policy (``--zero 1``; nemo_rl/models/megatron/train.py: "Context
Parallelism (CP>1) requires sequence packing"); its DTensor policy (``--zero 3``) refuses the
pair (dtensor_policy_worker.py, automodel/setup.py @7ea279abf: "Context parallel is not
supported for sequence packing"), and so does rlmcost.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment import TrainLayout

QUERY = ["grpo", "-m", "qwen2.5-7b", "--gpus", "16", "-S", "32768", "-T", "4096", "-B", "16",
         "-K", "8", "--zero", "1", "--json"]  # fmt: skip  (NeMo RL's Megatron policy packs)


def _training(*extra: str) -> dict:
    out = CliRunner().invoke(app, [*QUERY, *extra])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)["stages"]["training"]


def test_packed_budget_is_the_bin_over_the_cp_ranks() -> None:
    seq = 32768 + 4096
    assert TrainLayout(packing=True, cp=4).token_budget(seq) == seq // 4
    assert TrainLayout(packing=True, cp=3, micro_batch=2).token_budget(seq) == -(-2 * seq // 3)
    assert TrainLayout(packing=True, cp=4, max_tokens_per_gpu=5000).token_budget(seq) == 5000
    assert TrainLayout(packing=False, cp=4).token_budget(seq) is None


def test_cp_splits_the_packed_trainer_as_the_importer_does() -> None:
    # NeMo RL packs (the default deployment); its micro-batch is one 36,864-token sequence,
    # so under CP 4 a GPU holds 9,216 tokens of it: what an imported train_mb_tokens=36864
    # with context_parallel_size 4 gives (--max-tokens-per-gpu 9216)
    one, four = _training(), _training("--cp", "4")
    imported = _training("--cp", "4", "--max-tokens-per-gpu", "9216")
    assert four["memory_breakdown_bytes"] == imported["memory_breakdown_bytes"]
    act1 = one["memory_breakdown_bytes"]["activations"]
    act4 = four["memory_breakdown_bytes"]["activations"]
    assert act4 < act1 / 3  # a quarter of each sequence's tokens per GPU (no longer equal)


def test_nemo_rl_dtensor_refuses_cp_with_packing() -> None:
    out = CliRunner().invoke(app, [*QUERY[:-3], "--cp", "4"])  # the default: --zero 3, packed
    assert out.exit_code != 0
    assert "refuses context parallelism with sequence packing" in out.output
    assert "give --no-packing, or --zero 1" in out.output
    for mend in (["--no-packing"], ["--zero", "1"], ["--framework", "none", "--zero", "3"]):
        res = CliRunner().invoke(app, [*QUERY[:-3], "--cp", "4", *mend, "--json"])
        assert res.exit_code == 0, res.output
