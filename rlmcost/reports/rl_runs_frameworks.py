"""Each framework's published runs as the query its users would write (one function each).

NeMo RL, verl, OpenRLHF, TRL and slime runs go through rlmcost's importers with the run's
``framework_settings`` as the importer reads them (a YAML mapping of dotted keys with Hydra
overrides, an argument list, slime's launch line); the keys a setting needs that the data
leaves out are filled from the framework's own defaults, each stated. DeepSpeed-Chat and AReaL
have no importer: one explicit mapping each onto ``--framework none`` with every field given.
The published workload goes on top (:func:`rlmcost.reports.rl_runs.workload`).

Global rules used by several mappings (no per-run constant):

* :func:`engine_tp`: an engine TP the source leaves open is the smallest power of two that puts
  at most half the HBM of bf16 weights on a GPU (the rule of ``tp_per_model``,
  :func:`rlmcost.placement.inputs.auto_tp`); OpenRLHF's runs take the smallest that fits
  instead, as OpenRLHF's scripts do (:mod:`rlmcost.reports.rl_runs_engine_tp`, which sets
  ``--vllm_tensor_parallel_size``);
* asynchronous runs: ``--placement async`` with the source's staleness and the GPU split of
  ``gpus_by_role`` as ``--groups``.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.moe_dispatcher import implicit_choices
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.frameworks.virtual_pipeline import choices as virtual_choices
from rlmcost.reports.rl_runs import Recipe, model_name, model_spec, workload
from rlmcost.reports.rl_runs_areal import areal
from rlmcost.reports.rl_runs_dschat import deepspeed_chat
from rlmcost.reports.rl_runs_slime import slime
from rlmcost.reports.rl_runs_trl import trl

Record = Mapping[str, Any]

OPENRLHF_RATIO = {"ref": 1, "reward": 1, "critic": 2, "actor": 2, "vllm": 2}
"""GPUs per model in OpenRLHF's Ray + vLLM benchmark: ref : reward : critic : actor : vLLM =
1 : 1 : 2 : 2 : 2 (OpenRLHF benchmark/README.md, rows 'OpenRLHF(ray+vllm)' 1:1:2:2:2 for 7B,
13B, 34B and 2:2:4:4:4 for 70B), scaled to the run's GPU count."""

OPENRLHF_ALL_PROMPTS_DATE = "2024-11-07"
"""The day OpenRLHF began sending a step's prompts to the vLLM engines at once (PR 507, commit
e52bc6c5, "Send all prompts to vllm to enhance performance"). Before it, ``PPOTrainer.fit``
called ``make_experience`` once per ``micro_rollout_batch_size`` prompts of each actor rank, and
``RemoteExperienceMaker._generate_vllm`` handed those prompts to one engine (rank % engines), a
synchronous Ray actor that runs one ``generate`` call at a time (openrlhf/trainer/ppo_trainer.py
and ppo_utils/experience_maker.py at commit dbdd43b0, 2024-03-26)."""

def recipe(record: Record) -> Recipe:
    """The run's :class:`~rlmcost.reports.rl_runs.Recipe` (a SpecError: unexpressible)."""
    mapper = MAPPINGS.get(str(record["framework"]))
    if mapper is None:
        return Recipe(record, None, unexpressible=f"no mapping for {record['framework']}")
    try:
        q, overlay, choices, how = mapper(record)
        choices = [*choices, *workload(record, q), *implicit_choices(q.notes),
                   *virtual_choices(q.notes)]
    except SpecError as exc:
        return Recipe(record, None, unexpressible=str(exc))
    return Recipe(record, q, overlay, tuple(choices), how, untimed=untimed_phases(record))


def untimed_phases(record: Record) -> tuple[str, ...]:
    """rlmcost's phases the run's published step leaves out (:attr:`Recipe.untimed`): verl's
    fully-async trainer's :data:`VERL_ASYNC_UNTIMED`; none elsewhere."""
    if record["framework"] == "verl" and _is_verl_async(record["framework_settings"]):
        return VERL_ASYNC_UNTIMED
    return ()


Mapped = tuple[ImportedQuery, dict[str, Any], list[str], str]


def _overlay(record: Record) -> dict[str, Any]:
    """A model the data gives only by its config, as a full spec for every role it plays."""
    if record["model_builtin"]:
        return {}
    hf = model_name(record)
    return {"models": {"actor": model_spec(str(record["model"]), record["model_config"], hf)}}


def engine_tp(model: str | Mapping[str, Any], hardware: str) -> int:
    """The engine TP a source leaves open (module docstring)."""
    from rlmcost.evaluation.deployment import spec_params
    from rlmcost.placement.inputs import auto_tp
    from rlmcost.specs import ModelSpec, get_hardware, get_model

    spec = get_model(model) if isinstance(model, str) else ModelSpec.model_validate(model)
    return auto_tp(spec.arch(), get_hardware(hardware), spec_params(spec) * 2)


def _import_file(loader: Callable[..., ImportedQuery], settings: dict[str, Any],
                 overrides: list[str], *args: Any) -> ImportedQuery:  # fmt: skip
    """``loader`` on a YAML file of the dotted ``settings`` (as `rlmcost import` reads one)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.yaml"
        path.write_text(json.dumps(settings))  # JSON is YAML
        q = loader(path, overrides, *args)
    q.source = "rl_runs.json framework_settings"
    return q


# -- NeMo RL ----------------------------------------------------------------------------------


def nemo_rl(record: Record) -> Mapped:
    """The recipe's keys through :func:`~rlmcost.frameworks.nemo_rl.import_nemo_rl`."""
    from rlmcost.frameworks.nemo_rl import import_nemo_rl
    from rlmcost.frameworks.nemo_rl_vllm import release_vllm

    s = dict(record["framework_settings"])
    choices = []
    s["policy.model_name"] = model_name(record)
    if any(k.startswith("policy.megatron_cfg.") for k in s):
        s["policy.megatron_cfg.enabled"], s["policy.dtensor_cfg.enabled"] = True, False
        choices.append("policy.megatron_cfg.enabled true, dtensor_cfg.enabled false: the "
                       "recipe's Megatron-core backend (the settings are megatron_cfg keys)")
    total = int(s["policy.max_total_sequence_length"])
    for kind, size in (("train", "policy.train_micro_batch_size"),
                       ("logprob", "policy.logprob_batch_size")):  # fmt: skip
        key = f"policy.sequence_packing.{kind}_mb_tokens"
        if s.get("policy.sequence_packing.enabled") and key not in s and size in s:
            s[key] = total * int(s.get(size, 1))
            choices.append(f"{key} = max_total_sequence_length x {size.split('.')[-1]} = "
                           f"{s[key]} (grpo_math_1B.yaml's ${{mul:...}})")  # fmt: skip
    q = _import_file(import_nemo_rl, s, [], int(record["prompt_len"]))
    release = re.match(r"nemo_rl_v(\d+\.\d+)", str(record["source"]))
    if release:  # the source's NeMo RL release: its pinned vLLM (deployment.vllm_release)
        release_vllm(q, release[1])
    if s.get("grpo.async_grpo.enabled"):
        k = int(record["off_policy_steps"])
        q.set("--placement", "async")
        q.set("--staleness", k)
        choices.append(f"async GRPO: --placement async --staleness {k} "
                       "(grpo.async_grpo.max_trajectory_age_steps), generation and training on "
                       "the groups of generation.colocated.resources")  # fmt: skip
    return q, _overlay(record), choices, "rlmcost import nemo-rl (framework_settings as YAML)"


# -- verl -------------------------------------------------------------------------------------

_VERL_ASYNC = ("rollout.nnodes", "rollout.n_gpus_per_node", "async_training.",
               "data.gen_batch_size")  # fmt: skip
_VERL_SCRIPT = ("LAST_LAYER",)  # launch-script variables, not config keys

_VERL_FILTER = "algorithm.filter_groups."

VERL_ASYNC_UNTIMED = ("weight sync",)
"""What verl's fully-async trainer leaves out of its published step: the parameter sync.
``fully_async_trainer.py`` ``fit`` (recipe/fully_async_policy at volcengine/verl 85d5b2ee2,
the commit that added the doc's tables, lines 256-266; verl/experimental/fully_async_policy at
b178a3c likewise) closes ``marked_timer("step")`` around the queue wait (``gen``) and
``_process_batch_common`` (reward, reference, ``update_actor``), then calls
``_trigger_parameter_sync_after_step``, which every ``trigger_parameter_sync_step`` local steps
logs the step metrics summed over them (``detach_utils.py`` ``MetricsAggregator``: ``timing_s/``
keys are ``time_sum``) and only then times ``sync_weights`` (the NCCL broadcast to the
rollouter) as its own ``timing_s/param_sync`` (lines 334-360). So a logged step is the
trainer's cycle of ``trigger_parameter_sync_step`` local steps less the parameter sync;
rlmcost's overlapped iteration carries the weight sync on the trainer's path (and the
rollouter's, which the sync stops too), so its predicted seconds come off."""


VERL_ROLLOUTER_GROUPS_PER_SERVER = 16
"""Prompt groups verl's fully-async rollouter keeps in flight per rollout server:
``fully_async_rollouter.py`` sets ``max_concurrent_samples = len(server_handles) * 16`` (at most
``max_required_samples``) and ``_processor_worker`` submits no sample while that many are active
(volcengine/verl 85d5b2ee2 recipe/fully_async_policy, lines 170-171 and 383; b178a3c
verl/experimental/fully_async_policy lines 207-208 and 542); a sample is one prompt with its
``rollout.n`` responses, spread over the servers by the agent-loop manager, so a replica holds at
most 16 x n sequences: rlmcost's ``--max-num-seqs`` on the rollout engines."""


def _is_verl_async(settings: Mapping[str, Any]) -> bool:
    """Whether verl settings launch the fully-async trainer (its keys, :data:`_VERL_ASYNC`)."""
    return any(k.startswith(_VERL_ASYNC) for k in settings)
_VERL_ASYNC_NO_FILTER = (
    "algorithm.filter_groups.enable: not read by verl's fully-async trainer, so no dynamic "
    "sampling (no --oversample) and no group dropped from the trained batch: "
    "fully_async_trainer.py _get_samples_from_queue takes require_batches x "
    "ppo_mini_batch_size samples from the queue and assembles them all "
    "(detach_utils.py assemble_batch_from_rollout_samples), ray_trainer.py "
    "_process_batch_common runs compute_advantage and update_actor on that whole batch "
    "(recipe/fully_async_policy at volcengine/verl 85d5b2ee2, the doc's experiment commit; "
    "verl/experimental/fully_async_policy at b178a3c likewise); filter_groups is read only by "
    "recipe/dapo/dapo_ray_trainer.py fit")
"""verl's DAPO dynamic sampling under the fully-async trainer: a no-op (the cited lines)."""


def verl(record: Record) -> Mapped:
    """The launch script's keys through :func:`~rlmcost.frameworks.verl.import_verl`
    (``+key`` entries as Hydra overrides); the fully-async trainer's keys by hand."""
    from rlmcost.frameworks.verl import import_verl
    from rlmcost.frameworks.verl_versions import CURRENT_DEFAULT

    s = dict(record["framework_settings"])
    code_date = s.pop("code_date", None)  # the verl code the run used (its assumptions)
    choices: list[str] = []
    s["actor_rollout_ref.model.path"] = model_name(record)
    async_keys = {k: s.pop(k) for k in list(s) if k.startswith(_VERL_ASYNC)}
    for k in _VERL_SCRIPT:
        if s.pop(k, None) is not None:
            choices.append(f"{k}: a launch-script variable (pipeline layers of the last stage), "
                           "not a verl key: not read")  # fmt: skip
    pre = "+actor_rollout_ref.actor.optim.override_optimizer_config."
    if s.get(f"{pre}optimizer_cpu_offload") and float(s.get(f"{pre}optimizer_offload_fraction",
                                                             0)) >= 1:  # fmt: skip
        s["actor_rollout_ref.actor.megatron.optimizer_offload"] = True
        choices.append("override_optimizer_config.optimizer_cpu_offload with offload fraction 1: "
                       "Megatron's CPU optimizer holds every optimizer state on the host "
                       "(rlmcost's optimizer offload)")  # fmt: skip
    strategy = "actor_rollout_ref.actor.strategy"
    if strategy not in s and any(k.startswith("actor_rollout_ref.actor.megatron.") for k in s):
        s[strategy] = "megatron"
        choices.append("actor.strategy megatron: the script runs --config-name "
                       "ppo_megatron_trainer (its actor.megatron keys)")  # fmt: skip
    if async_keys:
        rollout = _verl_async(s, async_keys, record, choices)
    overrides = [f"{k}={json.dumps(s.pop(k))}" for k in list(s) if k.startswith("+")]
    q = _import_file(import_verl, s, overrides, code_date, str(record["hardware"]))
    choices += [f"{c.flag} {c.value}: {c.how}" for c in q.conversions if c.flag == "--max-num-seqs"]
    if async_keys:
        q.set("--gpus", record["gpus"])
        tp = dict(q.flags)["--rollout-tp"]
        q.set("--groups", f"rollout={rollout}[tp={tp}],{q.trainer_roles()}="
                          f"{record['gpus'] - rollout}")  # fmt: skip
        q.set("--placement", "async")
        q.set("--staleness", 1)
        q.set("--no-sleep")
        q.set("--no-recompute-logprobs")
        n = int(record["samples_per_prompt"])
        cap = min(VERL_ROLLOUTER_GROUPS_PER_SERVER * n,
                  int(dict(q.flags).get("--max-num-seqs", CURRENT_DEFAULT)))  # fmt: skip
        q.set("--max-num-seqs", cap)
        choices.append(f"--max-num-seqs {cap}: the rollouter keeps at most "
                       f"{VERL_ROLLOUTER_GROUPS_PER_SERVER} prompt groups of {n} in flight per "
                       "server (fully_async_rollouter.py max_concurrent_samples = servers x 16)")
        if async_keys.get("async_training.partial_rollout"):
            q.set("--partial-rollout")
            choices.append("async_training.partial_rollout: --partial-rollout, the rollouter "
                           "streams samples and resumes the ones a parameter sync interrupts "
                           "(fully_async_rollouter.py, partial_single_turn_agent_loop.py)")
        choices.append("the published step leaves out the parameter sync (fully_async_trainer"
                       ".py fit: marked_timer('step') closes before _trigger_parameter_sync_"
                       "after_step times sync_weights as timing_s/param_sync): the predicted "
                       "weight sync is taken off the predicted iteration")  # fmt: skip
    return q, _overlay(record), choices, "rlmcost import verl (framework_settings as YAML)"


def _verl_async(s: dict[str, Any], a: Mapping[str, Any], record: Record,
                choices: list[str]) -> int:  # fmt: skip
    """verl's fully-async trainer (verl/experimental/fully_async_policy; docs/advance/
    fully_async.md): the importer reads the trainer's keys; the rest is said here. Returns the
    rollout GPUs."""
    mini = int(s["actor_rollout_ref.actor.ppo_mini_batch_size"])
    per_step = int(a["async_training.require_batches"]) * mini * int(
        a["async_training.trigger_parameter_sync_step"])  # fmt: skip
    s["data.train_batch_size"] = per_step
    choices.append(f"fully async: a step is require_batches x ppo_mini_batch_size x "
                   f"trigger_parameter_sync_step = {per_step} prompts (data.train_batch_size "
                   "0 in the script)")  # fmt: skip
    per_node = a.get("rollout.n_gpus_per_node", s.get("trainer.n_gpus_per_node", 8))
    rollout = int(a["rollout.nnodes"]) * int(per_node)
    choices.append(f"fully async: {rollout} rollout GPUs (rollout.nnodes x n_gpus_per_node) as "
                   "their own group, the trainer's on the rest; --placement async "
                   f"--staleness 1 (staleness_threshold {a['async_training.staleness_threshold']}"
                   " < 1: samples at most one parameter version old, rounded up to one step)")
    if a.get("async_training.use_rollout_log_probs"):
        choices.append("use_rollout_log_probs: the engine's log-probs, no old-log-prob forward "
                       "(--no-recompute-logprobs)")  # fmt: skip
    if str(s.get(f"{_VERL_FILTER}enable", False)).lower() == "true":
        choices.append(_VERL_ASYNC_NO_FILTER)
    for k in [k for k in s if k.startswith(_VERL_FILTER)]:
        s.pop(k)
    return rollout



# -- OpenRLHF ---------------------------------------------------------------------------------


def openrlhf(record: Record) -> Mapped:
    """The example script's arguments through :func:`~rlmcost.frameworks.openrlhf.
    import_openrlhf`, the GPUs split by :data:`OPENRLHF_RATIO`."""
    from rlmcost.frameworks.openrlhf import (
        ENGINE_UTILIZATION_ARG_DATE,
        SELECTIVE_LOG_SOFTMAX_DATE,
        engine_utilization,
        import_openrlhf,
        logits_mode,
    )

    argv: list[str] = []
    for key, value in record["framework_settings"].items():
        if not key.startswith("--") or key == "--vllm_tensor_parallel_size":
            continue  # the script's name; the engines' TP, set below
        argv += [key] if value is True else [key, str(value)]
    code = str(record["framework_settings"].get("code_date", SELECTIVE_LOG_SOFTMAX_DATE))
    util = engine_utilization(code)
    if util is not None and "--vllm_gpu_memory_utilization" not in record["framework_settings"]:
        argv += ["--vllm_gpu_memory_utilization", str(util)]
    name = model_name(record)
    argv += ["--pretrain", name, "--reward_pretrain", name]
    gpus = int(record["gpus"])
    unit, rest = divmod(gpus, sum(OPENRLHF_RATIO.values()))
    if rest:
        raise SpecError(f"{gpus} GPUs do not split 1:1:2:2:2 (OpenRLHF's benchmark)")
    model = _overlay(record).get("models", {}).get("actor", name)
    given = record["framework_settings"].get("--vllm_tensor_parallel_size")
    vtp = int(given) if given else engine_tp(model, str(record["hardware"]))
    for role, share in OPENRLHF_RATIO.items():
        n = share * unit
        if role == "vllm":
            argv += ["--vllm_num_engines", str(n // vtp), "--vllm_tensor_parallel_size", str(vtp)]
        else:
            argv += [f"--{role}_num_nodes", "1", f"--{role}_num_gpus_per_node", str(n)]
    q = import_openrlhf(argv)
    q.source = "rl_runs.json framework_settings as train_ppo_ray arguments"
    per_call = _openrlhf_calls(record, q)
    choices = [
        f"GPUs per model ref:reward:critic:actor:vLLM = 1:1:2:2:2 x {unit} (OpenRLHF "
        "benchmark/README.md), each model on its own GPUs",
        f"vLLM TP {vtp} (--vllm_tensor_parallel_size)" if given else
        f"vLLM TP {vtp}: the smallest power of two leaving half the HBM free of bf16 weights",
        "--reward_pretrain and --critic_pretrain: the actor's model (the benchmark initialises "
        "the reward model from the actor's size)",
        "training steps no faster than DeepSpeed's Hugging Face trainer stack's measured rate: "
        "their FLOPs as dschat/utils/perf.py counts them (openrlhf/utils/perf.py copies it) at "
        "DSCHAT_TRAIN_PEAK_FRACTION of the peak, measured on DeepSpeed-Chat's blog runs "
        "(Figure 6), not on these; no exposed ZeRO-3 gathers: openrlhf/utils/deepspeed_utils.py "
        "leaves stage3_prefetch_bucket_size and stage3_max_live_parameters 'auto', which "
        "DeepSpeed drops (runtime/config_utils.py) for its defaults 5e7 and 1e9, so it prefetches",
    ]
    if util is not None and "--vllm_gpu_memory_utilization" not in record["framework_settings"]:
        choices.append(f"vLLM gpu_memory_utilization {util}: vllm.LLM's default; OpenRLHF code of "
                       f"{code} passes none (--vllm_gpu_memory_utilization from "
                       f"{ENGINE_UTILIZATION_ARG_DATE}, PR 677)")
    if "--micro_train_batch_size" not in record["framework_settings"]:
        choices.append("--micro_train_batch_size: OpenRLHF's default 4 (not published)")
    if record["framework_settings"].get("--adam_offload"):
        choices.append("--adam_offload's DeepSpeedCPUAdam on one thread a rank: Ray's "
                       "OMP_NUM_THREADS at num_cpus=num_gpus_per_actor (launcher.py @dbdd43b0), "
                       "CPU_ADAM_THREAD_S_PER_PARAM: a 2-vCPU VM's core, the A800 hosts' CPU "
                       "class unknown")
    if logits_mode(code) == "materialized":
        q.set("--logits", "materialized")
        choices.append(f"--logits materialized: log_probs_from_logits of {code} (a log_softmax "
                       f"of the whole logits; selective from {SELECTIVE_LOG_SOFTMAX_DATE})")
    if per_call:
        choices.append(
            f"generation in calls of micro_rollout_batch_size x n_samples_per_prompt = {per_call} "
            f"sequences per engine, one after another (--sequences-per-call {per_call}): the "
            f"code of {record['framework_settings']['code_date']}, before OpenRLHF sent all "
            f"prompts at once ({OPENRLHF_ALL_PROMPTS_DATE}, PR 507)"
        )
    return q, _overlay(record), choices, "rlmcost import openrlhf (framework_settings as argv)"


def _openrlhf_calls(record: Record, q: ImportedQuery) -> int:
    """Sequences per vLLM generate() call of OpenRLHF code older than
    :data:`OPENRLHF_ALL_PROMPTS_DATE` (``framework_settings.code_date``), set on ``q``; 0 for
    newer code (the whole share at once)."""
    s = record["framework_settings"]
    if str(s.get("code_date", OPENRLHF_ALL_PROMPTS_DATE)) >= OPENRLHF_ALL_PROMPTS_DATE:
        return 0
    per_call = int(s.get("--micro_rollout_batch_size", 8)) * int(
        s.get("--n_samples_per_prompt", 1))  # fmt: skip
    q.set("--sequences-per-call", per_call)
    return per_call


# -- explicit mappings: DeepSpeed-Chat (rl_runs_dschat), AReaL (rl_runs_areal) ------------------


MAPPINGS: dict[str, Callable[[Record], Mapped]] = {
    "nemo-rl": nemo_rl, "verl": verl, "openrlhf": openrlhf,
    "deepspeed-chat": deepspeed_chat, "areal": areal, "trl": trl, "slime": slime,
    "miles": slime,
}  # fmt: skip
"""The mapping of each framework in the data."""

