"""AReaL's published runs (AReaL v0.3 blog Table 2) as an explicit mapping onto ``--framework
none`` (rlmcost has no AReaL importer); one of the mappings of
:mod:`rlmcost.reports.rl_runs_frameworks`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.reports.rl_runs import model_name
from rlmcost.reports.rl_runs_areal_checks import published_checks

Record = Mapping[str, Any]
Mapped = tuple[ImportedQuery, dict[str, Any], list[str], str]

AREAL_TRAIN_SHARE = (1, 4)
"""Training GPUs of an asynchronous AReaL run: 1/4 of the GPUs in whole nodes, SGLang on the
other 3/4. arXiv 2505.24298 §6.1 (assets/paper.pdf at inclusionAI/AReaL 4aef98d8): "For AREAL,
we maintain a fixed ratio between inference and training devices, allocating three-quarters of
the devices for inference" (chosen over 50-50 for its higher training throughput); the same in
benchmark/verl_v0_3_0_post1_76084d3/build_cmd.py ``get_allocation_mode`` at 820ca49:
``n_sglang_gpus = n_nodes * 8 // 4 * 3``."""

AREAL_TRAIN_PP = {"1.5B": 2, "7B": 4}  # the sizes of AREAL_MEM_FRACTION
"""Pipeline stages of the asynchronous AReaL trainer by model size, TP 1 (the same
``get_allocation_mode``: ``pp = 2`` for model size 1, ``pp = 4`` for 7; training allocation
``d{n_train_gpus // pp}m1p{pp}``)."""

AREAL_SYNC_ALLOCATION = "eta0"
"""How synchronous AReaL splits its GPUs: as the asynchronous runs (3/4 SGLang, 1/4 trainer at
:data:`AREAL_TRAIN_PP`), the same system at maximum staleness 0. Table 2's 1.5B pair are the
staleness ablation's runs: their AIME24 scores 42.0 and 42.2 are the blog's Table 3 rows eta = 0
and eta = 4 (+ decoupled objective), and 41.0 / 14.8 h = 2.77 = Fig. 7's 356.6k / 128.7k
tokens/s (blog/AReaL_v0_3.md at tag v0.3.0; arXiv 2505.24298 Table 2 and Fig. 5c), an ablation
that varies eta only ("When eta = 0, the system degenerates to the synchronous RL setting", the
blog's Solution 1; paper §4.1); the 7B pair are taken alike ("Under equal resource
constraints"). Before: AReaL-boba's synchronous configs (examples/configs/{1.5B,7B}-distill/
ppo-*-gpus-128.yaml at 23df2682a, allocation_mode sglang.d64p1m1+d32p2m1), the v0.2 recipe."""

AREAL_STALENESS = 4
"""max_head_offpolicyness of AReaL's asynchronous math recipes (AReaL
examples/configs/v0.2-qwen2-math/README.md and the README's quick start: 4; the benchmark's
areal_config.yaml at commit 820ca49: 4)."""

AREAL_MAX_TOKENS_PER_MB = 30720
"""AReaL's training and inference token budget per micro-batch (packed sequences): AReaL-boba's
configs of these models on this data, examples/configs/{1.5B,7B}-distill/ppo-*-distill-gpus-128.yaml
at inclusionAI/AReaL 23df2682a (v0.3 release), actor_train / actor_inf.mb_spec.max_tokens_per_mb
30720, as examples/configs/qwen3-code/8b.yaml and training/configs/async-ppo.yaml there."""

AREAL_MEM_FRACTION = {"1.5B": 0.8, "7B": 0.7}
"""SGLang's mem_fraction_static of AReaL's benchmark by model size (commit 820ca49:
benchmark/verl_v0_3_0_post1_76084d3/areal_config.yaml ``actor.sglang.mem_fraction_static: 0.8``;
build_cmd.py sets 0.7 for model sizes above 1 "to avoid OOM", as examples/configs/qwen3-code/
8b.yaml has it)."""

AREAL_SYNC_RECOMPUTE = False
"""Whether synchronous AReaL recomputes the old log-probs with a trainer forward: no. At the v0.3
release (inclusionAI/AReaL 23df2682a) training/configs/sync-ppo.yaml sets
``ppo.recompute_logprob: false`` and ``use_decoupled_loss: false`` (async-ppo.yaml: true, true),
and docs/tutorial/quickstart.md says recompute_logprob "Defaults to True for asynchronous
experiments and False for synchronous baselines"."""

AREAL_TRAINER_KERNELS = "realhf"
"""AReaL v0.3's trainer (``--trainer-kernels``): realhf's own ``ReaLModel`` under Megatron's
DDP, not Megatron-core's TE layers. At tag v0.3.0 ``realhf/impl/model/modules/mlp.py`` uses
``_LlamaRMSNorm`` (fp32 upcast, unfused) unless ``REAL_LLM_USE_TE=1``
(``realhf/base/constants.py`` ``use_te_impl``; no config or launcher sets it) and
``down_proj(act_fn(gate) * upproj)``; ``modules/attn.py`` calls ``flash_attn_varlen_func`` of
the flash-attn 2 package; RoPE is flash-attn's fused Triton kernel (``modules/rotary.py``).
Priced by :mod:`rlmcost.perf.policy_worker`, and no faster than the rate the paper measured for
that trainer (:mod:`rlmcost.perf.realhf_rate`, arXiv 2505.24298 Figure 6a)."""

AREAL_SGLANG_CONTEXT = 32768
"""SGLang's ``--context-length`` in AReaL v0.3 (``realhf/api/cli_args.py`` ``SGLangConfig.
context_length`` at tag v0.3.0, and ``actor.sglang.context_length`` in the benchmark's
areal_config.yaml at 820ca49): it sizes the request pool and so SGLang's default
``max_running_requests`` (:mod:`rlmcost.deployment.sglang_limits`); AReaL leaves
``max_running_requests`` unset and sets ``schedule_policy: lpm`` (the same SGLangConfig)."""

AREAL_MINI_BATCHES = 4
"""PPO mini-batches per step of AReaL's benchmark (areal_config.yaml at 820ca49:
``ppo.ppo_n_minibatches: 4``)."""


def areal(record: Record) -> Mapped:
    """AReaL v0.3 (SGLang generation, Megatron training; inclusionAI/AReaL
    training/main_async_ppo.py and examples/configs): GRPO-style PPO without a critic or KL,
    a rule-based math reward. The asynchronous runs recompute the proximal log-probs
    (ppo.recompute_logprob, use_decoupled_loss); the synchronous baseline does not
    (:data:`AREAL_SYNC_RECOMPUTE`)."""
    from rlmcost.reports.rl_runs_frameworks import _overlay, engine_tp

    q = ImportedQuery("none", "AReaL v0.3 (explicit mapping)", algorithm="rlvr")
    gpus = int(record["gpus"])
    name = model_name(record)
    tp = engine_tp(name, str(record["hardware"]))
    longest = int(record["prompt_len"]) + int(record["max_response_len"])
    budget = max(AREAL_MAX_TOKENS_PER_MB, longest)
    size = str(record["model_hf"]).rsplit("-", 1)[-1]
    if size not in AREAL_MEM_FRACTION:
        raise SpecError(f"AReaL's benchmark configures {', '.join(AREAL_MEM_FRACTION)} models, "
                        f"not {size}")  # fmt: skip
    fraction = AREAL_MEM_FRACTION[size]
    sync = record["off_policy_steps"] == 0
    recompute = "--recompute-logprobs" if AREAL_SYNC_RECOMPUTE or not sync else None
    recompute = recompute or "--no-recompute-logprobs"
    for flag, value in (("--model", name), ("--no-kl", None), (recompute, None),
                        ("--mini-batches", AREAL_MINI_BATCHES),
                        ("--zero", "1"), ("--ckpt", "full"), ("--packing", None),
                        ("--max-tokens-per-gpu", budget),
                        ("--forward-max-tokens-per-gpu", budget),
                        ("--engine", "sglang"), ("--rollout-tp", tp),
                        ("--context-length", AREAL_SGLANG_CONTEXT),
                        ("--schedule-policy", "lpm"),
                        ("--logits", "low-memory"),
                        ("--gpu-memory-utilization", fraction),
                        ("--trainer-kernels", AREAL_TRAINER_KERNELS)):  # fmt: skip
        q.set(flag, value)
    choices = [
        "log-probs over chunks of 1024 tokens (areal/utils/functional.py gather_logprobs: "
        "log_softmax of logits.float() per chunk): model-dtype logits, fp32 one chunk at a time "
        "(--logits low-memory; the fp32 chunks autograd keeps for the update are not counted)",
        "--framework none with every field given (no AReaL preset); rlvr: GRPO with a rule-based "
        "verifier, no critic, no KL (kl_ctl 0)",
        "trainer: Megatron with the distributed optimizer (--zero 1), gradient checkpointing, "
        f"packed micro-batches of max({AREAL_MAX_TOKENS_PER_MB} (AReaL-boba's mb_spec), the "
        f"longest sequence {longest}) = {budget} tokens; the model realhf's ReaLModel "
        f"(--trainer-kernels {AREAL_TRAINER_KERNELS}: FlashAttention-2 varlen, fp32-upcast "
        "RMSNorm and SiLU x up eager, flash-attn's Triton RoPE; realhf/impl/model/modules/"
        "{attn,mlp,rotary}.py at v0.3.0, TE only under REAL_LLM_USE_TE=1), its update and "
        "log-prob forward no faster than arXiv 2505.24298 Fig. 6a's measured rate in realhf's "
        "FLOP count (rlmcost.perf.realhf_rate)",
        f"SGLang TP {tp} (--engine sglang: allocation_mode sglang.*; smallest power of two "
        "leaving half the HBM free of bf16 weights), "
        f"mem_fraction_static {fraction} (the benchmark's areal_config.yaml / build_cmd.py at "
        f"820ca49), {AREAL_MINI_BATCHES} PPO mini-batches (ppo_n_minibatches)",
        f"SGLang context_length {AREAL_SGLANG_CONTEXT}, max_running_requests unset (SGLang's "
        "default from its KV pool: min(pool // 2, its 2048-4096 request rows)) and "
        "schedule_policy lpm (realhf/api/cli_args.py SGLangConfig at v0.3.0): "
        "--context-length, --schedule-policy lpm",
    ]
    q.set("--refit", "disk")
    choices.append("weight update through shared storage (--refit disk): realhf at v0.3.0 saves "
                   "the parameters under PARAM_REALLOC_PATH after each train_step "
                   "(model_worker.py, param-sync-save) and gserver_manager.py "
                   "flush_requests_and_update_weights has every SGLang server load them with "
                   "/update_weights_from_disk; DISK_REFIT_BYTES_PER_S (AReaL PR 324) over the "
                   "full model, the storage's contention under many readers not "
                   "modelled; the same manager sends each prompt's 16 samples to one server, "
                   "round robin over prompts (schedule_request, 'qid prompt (n samples) use "
                   "the same dst server'), so the busiest server holds ceil(prompts / "
                   "servers) whole groups (group_realhf.areal_server_lengths)")  # fmt: skip
    choices.append("rule-based reward and data transfer not priced: AReaL runs them on CPU "
                   "threads overlapped with generation (arXiv:2505.24298 §5); "
                   "blog/AReaL_v0_2.md: generation-to-training data transfer 'below 3 seconds "
                   "even in a 1,000-GPU cluster'")  # fmt: skip
    pp = AREAL_TRAIN_PP[size]
    num, den = AREAL_TRAIN_SHARE
    per_node = 8
    train = max(1, round(gpus * num / den / per_node)) * per_node
    q.set("--no-sleep")
    q.set("--groups", f"rollout={gpus - train}[tp={tp}],actor={train}[pp={pp}]")
    split = (f"{gpus - train} generation + {train} training GPUs (3/4 SGLang in whole nodes: "
             f"arXiv:2505.24298 §6.1), trainer PP {pp} (benchmark build_cmd.py "
             "get_allocation_mode at 820ca49)")  # fmt: skip
    if sync:
        choices.append("synchronous AReaL: old log-probs from generation, no recomputing "
                       "forward (--no-recompute-logprobs; AREAL_SYNC_RECOMPUTE)")  # fmt: skip
        choices.append(f"synchronous AReaL: the asynchronous system at maximum staleness 0 "
                       f"(AREAL_SYNC_ALLOCATION): {split}, generation then training, each "
                       "batch's longest answer before the update; between the weight save and "
                       "the next update the manager's 5 s weight-version poll, the rollout "
                       "workers' one-prompt-per-0.4 s submission of the next batch (as many "
                       "workers as training GPUs) and the trainer's 1 s data poll "
                       "(rlmcost.perf.areal_sync, on the disk refit)")  # fmt: skip
    else:
        q.set("--placement", "async")
        q.set("--staleness", AREAL_STALENESS)
        q.set("--partial-rollout")
        choices.append(f"asynchronous AReaL: {split}, --placement async --staleness "
                       f"{AREAL_STALENESS} (max_head_offpolicyness)")  # fmt: skip
        choices.append("interruptible generation (arXiv:2505.24298 §4.1): --partial-rollout, "
                       "the engines stream across batches and recompute the in-flight KV cache "
                       "at each weight update")  # fmt: skip
    for text in published_checks(record, size, gpus - train, sync):
        q.note(text)
    return q, _overlay(record), choices, "explicit mapping: AReaL -> --framework none"
