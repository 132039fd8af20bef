"""verl's reward model as verl scores with it (``reward_model.enable``), read by
:func:`rlmcost.frameworks.verl.import_verl`: the legacy reward worker, or the reward loop
(``reward_model.use_reward_loop``; docs/advance/reward_loop.rst, verl/experimental/reward_loop/
at volcengine/verl b178a3cd), which serves the reward model in an engine of its own
(``reward_model.rollout``: vLLM or SGLang, its own TP and ``gpu_memory_utilization``).

DisRM or GenRM. verl has no key for the kind of reward model (``RewardModelConfig``,
verl/workers/config/reward_model.py: enable, enable_resource_pool, n_gpus_per_node, nnodes,
rollout, model, sandbox_fusion); its rule is ``RewardLoopWorker.compute_score``
(verl/experimental/reward_loop/reward_loop.py): with ``custom_reward_function.path`` the
user's function scores each sample, reaching the reward model through
``reward_router_address`` (a GenRM: it prompts the model with the prompt and response and
parses the verdict it generates, the docs' "Generative Reward Model"); without it an enabled
reward model is taken as discriminative (one ``/classify`` forward per sample, ``# we assume
the rm is disrm``). So a reward loop with an enabled model and a custom function is read as a
GenRM: rlmcost's ``d-rlaif`` (GRPO with a judge that prefills the prompt and response and
decodes ``--judge-len`` tokens of verdict), ``--judge`` the reward model. A custom function
that only combines rules with a DisRM score (the docs' "hybrid" case) is code rlmcost cannot
read: said in a note. The legacy worker (``use_reward_loop`` false) runs a sequence-classifier
forward (``AutoModelForSequenceClassification``), whatever the custom function: a DisRM.

Placement (the docs' "Architecture Design"; reward_model.py ``RewardModelManager``):

* colocate (default): the engine on the actor's pool (``split_resource_pool`` of the global
  pool into TP-sized replicas, ray_trainer.py ``RewardLoopManager(rm_resource_pool=...)``),
  woken after all rollouts and put back to sleep after scoring (``compute_rm_score``: vLLM
  ``sleep(level=1)``, the weights to host memory; vllm_async_server.py), timed as verl's
  ``timing_s/reward``. rlmcost runs the judge's generation on the actor's GPUs after the
  rollouts (the placement's Assessment stage) in the group's engine layout (``--rollout-tp``),
  its KV cache what the sleeping models leave of the HBM: one engine per device group, so the
  reward engine's own TP and reservation are said in a note, not priced.
* standalone (``enable_resource_pool``): the engine on a pool of its own,
  ``reward_model.n_gpus_per_node x reward_model.nnodes`` GPUs (main_ppo.py
  ``init_resource_pool_mgr``), never asleep (``sleep``/``wake_up`` skip a standalone server);
  each sample is scored as its rollout finishes (agent_loop.py ``_compute_score``). rlmcost
  gives the judge a device group of those GPUs with the engine's settings (``--groups
  'actor+reference=N,judge=M[tp=..;gmu=..;...]'``); its groups start the judge after the
  rollouts (a stage barrier), so the overlap is left out: a note says the estimate is high by
  up to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery

RM = "reward_model"
ENGINE = f"{RM}.rollout"

LOOP_DEFAULT = "2025-12-09"
"""The day verl's default config turned the reward loop on: ``use_reward_loop: True`` in
trainer/config/reward_model/dp_reward_loop.yaml, the ppo_trainer.yaml default (volcengine/verl
PR 4452, 0102d04e0, 2025-12-09); before it the key had to be given."""

ENGINE_COUNTS = {"tensor_model_parallel_size": 2, "max_num_seqs": 1024,
                 "max_num_batched_tokens": 8192, "response_length": 2048}  # fmt: skip
"""The reward engine's numbers, as :data:`ENGINE_GMU` says."""

ENGINE_SWITCHES = {"enforce_eager": True, "enable_prefix_caching": True,
                   "free_cache_engine": True}  # fmt: skip
"""The reward engine's switches, as :data:`ENGINE_GMU` says."""

ENGINE_GMU = 0.5
"""The reward engine's ``reward_model.rollout`` defaults (verl/trainer/config/reward_model/
dp_reward_loop.yaml @b178a3cd): its own, not the actor rollout's (rollout.yaml: max_num_seqs
256, enforce_eager False)."""

_COSTLESS = ("num_workers", "reward_loop_source", "reward_loop_module_path",
             "reward_loop_class_name", "sandbox_fusion", "model.trust_remote_code",
             "rollout._target_", "rollout.dtype", "rollout.load_format", "rollout.max_model_len",
             "rollout.cudagraph_capture_sizes", "rollout.limit_images",
             "rollout.disable_log_stats", "rollout.skip_tokenizer_init",
             "rollout.enable_chunked_prefill", "rollout.prompt_length",
             "rollout.data_parallel_size", "rollout.expert_parallel_size",
             "rollout.engine_kwargs")  # fmt: skip
"""Reward-loop keys that change no step's cost as rlmcost prices it: the CPU-side reward loop
workers and their class, the sandbox, how the engine loads and logs (``prompt_length`` only
caps the judge's context; DP/EP sizes of one reward replica are 1 in every example)."""


def loop_on(r: Reader, day: str | None) -> bool:
    """``reward_model.use_reward_loop``, absent: the default of the verl of ``day`` (None:
    the current verl), :data:`LOOP_DEFAULT`."""
    return r.flag(f"{RM}.use_reward_loop", day is None or day >= LOOP_DEFAULT)


def reward_loop(r: Reader, q: ImportedQuery, actor_path: str, alg: str,
                day: str | None) -> str:  # fmt: skip
    """``reward_model.enable`` (module docstring): ``--reward`` (unless it is the actor's) for
    a DisRM, ``--judge`` and ``--judge-len`` for a GenRM; returns the rlmcost method (``alg``,
    or ``d-rlaif`` for a GenRM under a GRPO-style estimator)."""
    from rlmcost.frameworks.model_path import model_of_path

    rm = r.text(f"{RM}.model.path", None)
    on = loop_on(r, day)
    custom = r.text("custom_reward_function.path", None)
    r.raw("custom_reward_function.name")
    if not (on and custom and rm):
        if rm and rm != actor_path:
            q.set("--reward", model_of_path(q, f"{RM}.model.path", rm))
        if on:
            _disrm_note(r, q)
        elif custom and rm:
            q.note("custom_reward_function with the legacy reward worker (use_reward_loop "
                   "false): the reward model is a sequence classifier (one forward per "
                   "response), the function combines its score on the CPU")  # fmt: skip
        return alg
    if alg not in ("grpo", "rloo"):
        if rm != actor_path:
            q.set("--reward", model_of_path(q, f"{RM}.model.path", rm))
        q.note(f"reward loop with custom_reward_function {custom} and a reward model (a GenRM "
               f"in verl's docs) under {alg}: rlmcost's generating judge is d-rlaif's, on "
               "GRPO; the reward model is priced as one forward per response (its verdict's "
               "decode not priced)")  # fmt: skip
        _disrm_note(r, q)
        return alg
    if rm != actor_path:
        q.set("--judge", model_of_path(q, f"{RM}.model.path", rm))
    length = r.integer(f"{ENGINE}.response_length", ENGINE_COUNTS["response_length"])
    q.convert(f"{ENGINE}.response_length={length}", "--judge-len", length,
              "tokens of verdict the GenRM generates per response: the reward engine's "
              "response budget (vllm_async_server.py generate: a request without max_tokens "
              "gets response_length + prompt_length - its prompt's tokens)")  # fmt: skip
    q.note(f"reward loop with custom_reward_function {custom} and reward model {rm}: a GenRM "
           "(verl's rule, reward_loop.py RewardLoopWorker.compute_score: the function scores "
           "through reward_router_address), priced as d-rlaif's judge: a prefill of prompt + "
           f"response and a decode of --judge-len {length} tokens per response; the "
           "function's own max_tokens (4096 in docs/advance/reward_loop.rst) is code: give "
           "--judge-len; a function that only combines rules with a discriminative score "
           "is a DisRM: import it without custom_reward_function")  # fmt: skip
    return "d-rlaif"


def _engine(r: Reader) -> tuple[str, int, float]:
    """The reward engine's name, TP and ``gpu_memory_utilization``; the costless keys read."""
    for key in _COSTLESS:  # a mapping's keys too (sandbox_fusion.url, engine_kwargs.vllm...)
        p = f"{RM}.{key}"
        for k in [k for k in r.flat if k == p or k.startswith(p + ".")]:
            r.raw(k)
    name = r.text(f"{ENGINE}.name", "vllm")
    tp = r.integer(f"{ENGINE}.tensor_model_parallel_size",
                   ENGINE_COUNTS["tensor_model_parallel_size"])  # fmt: skip
    gmu = r.fraction(f"{ENGINE}.gpu_memory_utilization", ENGINE_GMU)
    return name, tp, gmu


def _disrm_note(r: Reader, q: ImportedQuery) -> None:
    """The DisRM's engine, said (its forward is priced as a reward worker's: the same FLOPs)."""
    name, tp, gmu = _engine(r)
    own = r.flag(f"{RM}.enable_resource_pool", False)
    for key in ("n_gpus_per_node", "nnodes"):
        r.raw(f"{RM}.{key}")
    for key in ("response_length", "max_num_seqs", "max_num_batched_tokens", "enforce_eager",
                "enable_prefix_caching", "free_cache_engine"):  # fmt: skip
        r.raw(f"{ENGINE}.{key}")
    q.note(f"reward_model.use_reward_loop: verl serves the reward model in a {name} engine "
           f"(TP {tp}, gpu_memory_utilization {gmu:g}) "
           + ("on a pool of its own (enable_resource_pool)" if own else
              "on the actor's pool, woken after the rollouts")
           + "; rlmcost prices the reward forward as a reward worker's (the same FLOPs; the "
           "engine's reservation, wake and serving speed not modelled)")  # fmt: skip


def reward_pool(r: Reader, q: ImportedQuery) -> None:
    """Where a GenRM's engine runs (module docstring), after the actor's engine flags: on the
    actor's GPUs (colocate: a note) or on ``reward_model.n_gpus_per_node x nnodes`` of its own
    (standalone: ``--groups`` and ``--gpus``). Nothing for a query without the judge."""
    if q.algorithm != "d-rlaif":
        return
    name, tp, gmu = _engine(r)
    d, on = ENGINE_COUNTS, ENGINE_SWITCHES
    seqs = r.integer(f"{ENGINE}.max_num_seqs", d["max_num_seqs"])
    budget = r.integer(f"{ENGINE}.max_num_batched_tokens", d["max_num_batched_tokens"])
    eager = r.flag(f"{ENGINE}.enforce_eager", on["enforce_eager"])
    prefix = r.flag(f"{ENGINE}.enable_prefix_caching", on["enable_prefix_caching"])
    sleeps = r.flag(f"{ENGINE}.free_cache_engine", on["free_cache_engine"])
    flags = dict(q.flags)
    if name not in ("vllm", "sglang"):
        q.note(f"reward_model.rollout.name {name}: rlmcost models a vLLM/SGLang-style engine "
               "(nearest: vllm)")  # fmt: skip
        name = "vllm"
    if not r.flag(f"{RM}.enable_resource_pool", False):
        for key in ("n_gpus_per_node", "nnodes"):  # colocate: the trainer's (ray_trainer.py)
            r.raw(f"{RM}.{key}")
        actor = (flags.get("--rollout-tp", 2), "sglang" if flags.get("--engine") == "sglang"
                 else "vllm")  # fmt: skip
        differs = "" if (tp, name) == actor else (
            f"; its own {name} engine at TP {tp} is priced as the actor's {actor[1]} layout "
            f"(TP {actor[0]})")  # fmt: skip
        q.note(f"GenRM colocated (reward_model.enable_resource_pool false): verl wakes its "
               f"{name} engine (TP {tp}, gpu_memory_utilization {gmu:g}, max_num_seqs {seqs}) "
               "on the actor's GPUs after all rollouts and "
               + ("sleeps it after scoring (level 1: weights to host memory)" if sleeps else
                  "keeps it awake (free_cache_engine false)")
               + "; rlmcost runs the judge's generation there after the rollouts, its KV "
               "cache what the sleeping models leave of the HBM, not its own reservation "
               "(one engine per device group)" + differs)  # fmt: skip
        return
    per = r.integer(f"{RM}.n_gpus_per_node", 8, lo=0)  # dp_reward_loop.yaml: 8 and 0
    nodes = r.integer(f"{RM}.nnodes", 0, lo=0)
    if per <= 0 or nodes <= 0:  # main_ppo.py init_resource_pool_mgr raises the same
        raise SpecError(f"{r.where}: reward_model.enable_resource_pool needs "
                        f"reward_model.n_gpus_per_node and reward_model.nnodes above 0 (given "
                        f"{per} and {nodes}): the reward model's own pool")  # fmt: skip
    own = per * nodes
    if own % tp:
        raise SpecError(f"{r.where}: the reward pool's {own} GPUs (reward_model.n_gpus_per_node"
                        f" x nnodes) are not a multiple of reward_model.rollout."
                        f"tensor_model_parallel_size={tp}; give a multiple")  # fmt: skip
    train = int(flags["--gpus"])
    keys = (f"tp={tp};gmu={gmu:g};max-num-seqs={seqs};max-num-batched-tokens={budget};"
            f"eager={str(eager).lower()};prefix-caching={str(prefix).lower()};sleep=false"
            + (";engine=sglang" if name == "sglang" else ";engine=vllm"))  # fmt: skip
    q.conversions = [c for c in q.conversions if c.flag != "--gpus"]
    q.convert(f"trainer: {train} GPUs + reward_model.n_gpus_per_node={per} x nnodes={nodes}",
              "--gpus", train + own, "GPUs in all: the trainer's pool and the reward model's "
              "(main_ppo.py init_resource_pool_mgr)")  # fmt: skip
    q.convert(f"{RM}.enable_resource_pool=true", "--groups",
              f"{q.trainer_roles()}={train},judge={own}[{keys}]",
              f"the actor (its rollout engine), reference on the trainer's pool; the GenRM's "
              f"{name} engine on its own, awake (sleep/wake skip a standalone server: "
              "vllm_async_server.py), its reward_model.rollout settings")  # fmt: skip
    q.note("GenRM standalone: verl scores each sample as its rollout finishes (agent_loop.py "
           "_compute_score), overlapping generation; rlmcost starts the judge's group after "
           "the rollouts (a stage barrier): the estimate is high by up to the overlap, at "
           "most the shorter of the rollouts and the judge's generation")  # fmt: skip
