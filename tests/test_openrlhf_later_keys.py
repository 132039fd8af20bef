"""OpenRLHF's later command-line keys (rlmcost.frameworks.openrlhf_layouts ``later_options``;
openrlhf_dpo for train_dpo.py).

Sources (OpenRLHF/OpenRLHF): ``--rollout_max_tokens_per_gpu`` (f9a1676b, 2025-07-14),
``--rollout.max_tokens_per_gpu`` from ed62d0e2: the experience maker's token budget for the
log-prob, reference, reward and value forwards under dynamic batching, defaulting to the
training budget (openrlhf/cli/train_ppo_ray.py, trainer/ppo_utils/experience_maker.py
``split_rollout_samples`` @3c3be623), as in examples/scripts/train_reinforce_baseline_hybrid_
engine.sh (``--rollout.max_tokens_per_gpu 32768`` beside ``--train.max_tokens_per_gpu 16192``);
without it, ``--rollout.micro_batch_size`` samples per forward; ``--actor.freeze_visual_encoder``
sets ``requires_grad = False`` outside ``language_model`` and ``lm_head`` (models/actor.py);
``--colocate_all_models`` asserts the reference's GPUs are the actor's (train_ppo_ray.py);
``--algo.advantage.is_correction_*`` clamp or mask the loss's ratio (models/loss.py). train_dpo.py
has had no ``--actor.*`` names at any commit (its dotted names are ``--model.*``, ``--ds.*``,
``--train.*``: ed62d0e2, 3c3be623); ``--ds.experts_implementation`` is new in ed62d0e2 and
``--use_linger_kernel`` was 71f139b8's name for ``--use_liger_kernel``.
"""

from __future__ import annotations

import pytest

from rlmcost.errors import SpecError
from rlmcost.frameworks.openrlhf import import_openrlhf
from rlmcost.frameworks.openrlhf_dpo import import_openrlhf_argv

BASE = ["--actor.model_name_or_path", "Qwen/Qwen2.5-7B", "--reward.remote_url", "http://rm",
        "--algo.advantage.estimator", "reinforce_baseline", "--rollout.batch_size", "128",
        "--rollout.n_samples_per_prompt", "8", "--train.batch_size", "1024",
        "--actor.num_nodes", "1", "--actor.num_gpus_per_node", "8",
        "--ref.num_nodes", "1", "--ref.num_gpus_per_node", "8"]  # fmt: skip
DYNAMIC = ["--train.dynamic_batch_enable", "--train.max_tokens_per_gpu", "16192"]
FLAT = ["--pretrain", "Qwen/Qwen2.5-7B", "--remote_rm_url", "http://rm", "--use_dynamic_batch",
        "--train_max_tokens_per_gpu", "16192"]  # fmt: skip


def test_the_forwards_token_budget_is_read_dotted_and_flat() -> None:
    for argv in ([*BASE, *DYNAMIC, "--rollout.max_tokens_per_gpu", "32768"],
                 [*FLAT, "--rollout_max_tokens_per_gpu", "32768"]):  # fmt: skip
        q = import_openrlhf(argv)
        flags = dict(q.flags)
        assert flags["--forward-max-tokens-per-gpu"] == 32768, argv
        assert flags["--max-tokens-per-gpu"] == 16192
        assert not any("max_tokens_per_gpu" in k for k in q.ignored)
    # unset or equal to the training budget: the forwards take the trainer's (no flag)
    for argv in ([*BASE, *DYNAMIC], [*FLAT, "--rollout_max_tokens_per_gpu", "16192"]):
        assert "--forward-max-tokens-per-gpu" not in dict(import_openrlhf(argv).flags)


def test_the_forwards_micro_batch_without_dynamic_batching() -> None:
    q = import_openrlhf([*BASE, "--rollout.micro_batch_size", "16",
                         "--train.micro_batch_size", "4"])  # fmt: skip
    assert dict(q.flags)["--forward-micro-batch"] == 16
    same = import_openrlhf([*BASE, "--rollout.micro_batch_size", "4",
                            "--train.micro_batch_size", "4"])  # fmt: skip
    assert "--forward-micro-batch" not in dict(same.flags)
    # under dynamic batching the micro-batch sizes are unused: read, not listed as ignored
    dyn = import_openrlhf([*BASE, *DYNAMIC, "--train.micro_batch_size", "1",
                           "--rollout.micro_batch_size", "8"])  # fmt: skip
    assert not any("micro_batch_size" in k for k in dyn.ignored)
    assert "--forward-micro-batch" not in dict(dyn.flags)


def test_later_keys_map_note_or_refuse() -> None:
    q = import_openrlhf([*BASE, "--actor.freeze_visual_encoder", "--train.enable_ema",
                         "--train.ema_beta", "0.99", "--ds.experts_implementation", "grouped_mm",
                         "--algo.advantage.is_correction_enable",
                         "--algo.advantage.is_correction_type", "icepop"])  # fmt: skip
    assert "--freeze-vision-tower" in dict(q.flags)
    assert q.ignored == []
    assert any("EMA copy" in n and "not priced" in n for n in q.notes)
    assert any("--ds.experts_implementation grouped_mm" in n for n in q.notes)
    with pytest.raises(SpecError, match="4-bit"):
        import_openrlhf([*BASE, "--ds.load_in_4bit"])


def test_colocate_all_needs_the_references_gpus_to_be_the_actors() -> None:
    colocated = [*BASE, "--train.colocate_all", "--vllm.num_engines", "4",
                 "--vllm.tensor_parallel_size", "2"]  # fmt: skip
    q = import_openrlhf(colocated)
    assert dict(q.flags)["--gpus"] == 8 and q.ignored == []
    with pytest.raises(SpecError, match="same GPUs for ref and actor"):
        import_openrlhf([*colocated, "--ref.num_gpus_per_node", "4"])


def test_dpo_later_and_earlier_names() -> None:
    base = ["deepspeed", "--num_gpus", "8", "--module", "openrlhf.cli.train_dpo"]
    q = import_openrlhf_argv([*base, "--model.model_name_or_path", "Qwen/Qwen2.5-7B",
                              "--ds.experts_implementation", "grouped_mm"], None)  # fmt: skip
    assert q.ignored == [] and any("experts_implementation" in n for n in q.notes)
    flat = import_openrlhf_argv([*base, "--pretrain", "Qwen/Qwen2.5-7B", "--use_linger_kernel",
                                 "--train_split", "train", "--torch_compile"], None)  # fmt: skip
    assert dict(flat.flags)["--logits"] == "fused" and flat.ignored == []
    assert any("--torch_compile" in n for n in flat.notes)
    with pytest.raises(SpecError, match="model.model_name_or_path"):
        import_openrlhf_argv([*base, "--actor.model_name_or_path", "Qwen/Qwen2.5-7B"], None)


def test_micro_batch_defaults_follow_the_argument_layout() -> None:
    """train_ppo_ray.py's defaults: --micro_train_batch_size 4 and --micro_rollout_batch_size 8
    until a2978694 (2026-04-11), 1 and 1 from it (``--train.micro_batch_size`` /
    ``--rollout.micro_batch_size`` default 1 at 3c3be623); the dotted names came later
    (ed62d0e2), so a dotted command line without them trains micro-batches of 1."""
    dotted = dict(import_openrlhf(BASE).flags)
    assert dotted["--micro-batch"] == 1
    assert "--forward-micro-batch" not in dotted
    flat = ["--pretrain", "Qwen/Qwen2.5-7B", "--remote_rm_url", "http://rm"]
    assert dict(import_openrlhf(flat).flags)["--micro-batch"] == 4
    # only the rollout's given: compared with the layout's own training default
    q = import_openrlhf([*BASE, "--rollout.micro_batch_size", "4"])
    assert dict(q.flags)["--forward-micro-batch"] == 4
    assert "--forward-micro-batch" not in dict(
        import_openrlhf([*flat, "--micro_rollout_batch_size", "4"]).flags)


def test_the_param_dtype_is_read() -> None:
    """train_ppo_ray.py's ``--ds.param_dtype`` (choices bf16, the default, and fp16 @3c3be623):
    fp16 is rlmcost's --param-dtype fp16, bf16 the default, anything else an error."""
    q = import_openrlhf([*BASE, "--ds.param_dtype", "fp16"])
    assert dict(q.flags)["--param-dtype"] == "fp16" and q.ignored == []
    assert dict(import_openrlhf([*BASE, "--ds.param_dtype=fp16"]).flags)["--param-dtype"] == "fp16"
    assert "--param-dtype" not in dict(import_openrlhf([*BASE, "--ds.param_dtype", "bf16"]).flags)
    with pytest.raises(SpecError, match="bf16, fp16"):
        import_openrlhf([*BASE, "--ds.param_dtype", "fp8"])
