"""verl's rollout engine as rlmcost's engine flags: ``actor_rollout_ref.rollout`` (name, mode,
TP, memory reservation, sleep, eager, prefix caching, the running cap and token budget), the
model's MTP drafting (``actor_rollout_ref.model.mtp``) and a GenRM's engine
(:func:`rlmcost.frameworks.verl_reward.reward_pool`); moved out of
:mod:`rlmcost.frameworks.verl`, which calls :func:`engine`.

Defaults are verl's ``trainer/config/rollout/rollout.yaml`` (b25bb7d4f, b178a3cd5). verl
hands vLLM ``max_num_batched_tokens`` (8192 unless set) from v0.2 on (``LLM(...,
max_num_batched_tokens=...)``, ``vllm_rollout.py`` and ``vllm_rollout_spmd.py``:
``config.get('max_num_batched_tokens', 8192)`` at v0.2 and at beb624610^; the async server's
engine arguments after), so vLLM's own token budget, which depends on the GPU (``LLM_CLASS``
16384 on large GPUs, 8192 elsewhere: :func:`rlmcost.deployment.vllm_profile.
llm_class_defaults`), never reaches a verl engine; only vLLM's own running cap can
(:func:`rlmcost.frameworks.verl_versions.running_cap`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.frameworks.verl_reward import reward_pool
from rlmcost.frameworks.verl_versions import running_cap

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery
    from rlmcost.specs import HardwareSpec

ROLLOUT = "actor_rollout_ref.rollout"


def _mtp(r: Reader, q: ImportedQuery, engine: str) -> None:
    """``actor_rollout_ref.model.mtp`` (verl b178a3c, trainer/config/model/hf_model.yaml:
    enable, enable_train and enable_rollout False, method mtp, num_speculative_tokens 1): with
    enable and enable_rollout, the vLLM server gets ``speculative_config`` {method,
    num_speculative_tokens} (workers/rollout/vllm_rollout/vllm_async_server.py), the
    checkpoint's MTP layer drafting; with enable and enable_train, a Megatron actor trains the
    checkpoint's MTP layer with its loss (models/mcore/model_forward.py passes the labels;
    config_converter.py sets mtp_num_layers from num_nextn_predict_layers and
    weight_converter.py asserts one): ``--mtp-layers 1``."""
    m = "actor_rollout_ref.model.mtp"
    for key in ("mtp_loss_scaling_factor", "detach_encoder"):  # scale / cut a gradient: free
        r.raw(f"{m}.{key}")
    if not r.flag(f"{m}.enable", False):
        return
    if r.flag(f"{m}.enable_train", False):
        if r.text("actor_rollout_ref.actor.strategy", "fsdp") == "megatron":
            q.convert(f"{m}.enable_train=true", "--mtp-layers", 1, "the Megatron actor trains "
                      "the checkpoint's MTP layer (verl's converter supports one)")  # fmt: skip
        else:
            q.note("model.mtp.enable_train on an FSDP actor: verl trains MTP on Megatron "
                   "actors only; not priced")
    if not r.flag(f"{m}.enable_rollout", False):
        return
    if engine != "vllm":
        q.note(f"model.mtp.enable_rollout on {engine}: SGLang's EAGLE tree drafts are not "
               "modelled; decoding one token per step")  # fmt: skip
        return
    n = r.integer(f"{m}.num_speculative_tokens", 1)
    q.set("--speculative-tokens", n)
    q.note(f"model.mtp.enable_rollout: vLLM drafts {n} token(s) per step with the MTP layer, "
           "acceptance 0.85 (MTP_ACCEPTANCE, DeepSeek-V3 report §5.4.3)")  # fmt: skip


def _kv_cache_dtype(r: Reader, q: ImportedQuery, name: str) -> None:
    """``rollout.engine_kwargs.{vllm,sglang}.kv_cache_dtype``: verl passes the engine's
    ``engine_kwargs`` through to it (vllm_async_server.py: ``**engine_kwargs`` into the engine
    args; the SGLang server's likewise), so an FP8 KV cache is set there."""
    key = f"{ROLLOUT}.engine_kwargs.{name}.kv_cache_dtype"
    kv = r.raw(key)
    if kv is not None and str(kv).lower() != "auto":
        q.convert(f"{key}={kv}", "--kv-cache-dtype", str(kv).lower(),
                  "the engine's KV-cache dtype (verl passes engine_kwargs through)")


def engine(r: Reader, q: ImportedQuery, day: str | None,
           hardware: HardwareSpec | None = None) -> None:  # fmt: skip
    """The rollout engine's flags from ``actor_rollout_ref.rollout`` under the verl code of
    ``day`` (None: the current verl) on ``hardware`` (None: not given; where vLLM's own
    running cap then depends on the GPU, :func:`~rlmcost.frameworks.verl_versions.running_cap`
    states the large GPUs' and says the rest)."""
    name = r.text(f"{ROLLOUT}.name", "vllm")
    if name == "sglang":  # verl/workers/rollout/sglang_rollout: SGLang's admission and cap
        q.set("--engine", "sglang")
    elif name != "vllm":
        q.note(f"rollout.name {name}: rlmcost models a vLLM/SGLang-style engine (nearest)")
    if r.text(f"{ROLLOUT}.mode", "sync") != "sync":
        q.note("rollout.mode async: the same engine serves requests as they come; rlmcost "
               "models the synchronous iteration")  # fmt: skip
    if r.flag(f"{ROLLOUT}.multi_turn.enable", False):
        multi_turn(r, q)
    tp = r.integer(f"{ROLLOUT}.tensor_model_parallel_size", 2)
    q.set("--rollout-tp", tp)
    dp, ep = (r.integer(f"{ROLLOUT}.{k}_parallel_size", 1) for k in ("data", "expert"))
    if dp > 1 and ep > 1 and name == "vllm":  # vllm_async_server.py: one engine of DP x TP
        q.convert(f"rollout.expert_parallel_size={ep}", "--rollout-tp", ep, f"GPUs of one "
                  f"engine: EP = TP x DP = {tp} x {dp} (verl/workers/config/rollout.py)")
        q.convert(f"rollout.data_parallel_size={dp}", "--dp-attention", dp, f"vLLM's {dp} "
                  f"data-parallel ranks of TP {tp}, each attending for its own requests, the "
                  f"experts over all {ep} GPUs (rlmcost.perf.dp_attention)")  # fmt: skip
    elif dp > 1 or ep > 1:
        q.note(f"rollout data_parallel_size {dp}, expert_parallel_size {ep}: "
               + ("vLLM's data-parallel ranks without expert parallelism: replicas of TP "
                  f"{tp} each, as rlmcost places them (a MoE model's experts would form one TP "
                  "group over DP x TP, not modelled)" if ep == 1 else
                  f"experts over the {tp} TP ranks whole, the bytes a GPU holds as under TP; "
                  "priced as TP" if name == "vllm" else
                  "SGLang's DP x TP engine read at its TP"))  # fmt: skip
    q.set("--gpu-memory-utilization", r.fraction(f"{ROLLOUT}.gpu_memory_utilization", 0.5))
    q.set("--sleep" if r.flag(f"{ROLLOUT}.free_cache_engine", True) else "--no-sleep")
    if r.flag(f"{ROLLOUT}.enforce_eager", False):  # trainer/config/rollout/rollout.yaml: False
        q.set("--enforce-eager")
    if not r.flag(f"{ROLLOUT}.enable_prefix_caching", True):  # rollout.yaml: True (b25bb7d4f)
        q.set("--no-prefix-caching")
    _mtp(r, q, name)
    _kv_cache_dtype(r, q, name)
    running_cap(r, q, ROLLOUT, name, day, hardware)
    if name == "vllm" and day is not None:
        _vllm_version(q, day)
    budget = r.integer(f"{ROLLOUT}.max_num_batched_tokens", 8192)  # rollout.yaml: 8192
    if budget != 8192:
        q.set("--max-num-batched-tokens", budget)
    reward_pool(r, q)  # a GenRM's engine, beside the actor's or on GPUs of its own


def _vllm_version(q: ImportedQuery, day: str) -> None:
    """``--vllm-version``: the vLLM verl's ``setup.py`` admits on ``day``
    (:func:`~rlmcost.frameworks.verl_versions.vllm_pin`), where rlmcost models it; before
    0.9.0 a note: the engine keeps verl's current pin (0.12.0), which sorts as 0.8 did."""
    from rlmcost.frameworks.verl_versions import vllm_pin

    pin = vllm_pin(day)
    q.vllm_pin(f"verl of {day}: setup.py vllm<={pin}", pin,
               "the vLLM release its engine runs (pip's newest allowed)",
               f"verl of {day} admits vLLM <= {pin} (setup.py), before the releases rlmcost "
               "models (0.9.0-0.20.x): its start-up profile is priced with verl's current pin, "
               "vLLM 0.12.0, whose sampler sorts the vocabulary too")


def multi_turn(r: Reader, q: ImportedQuery) -> None:
    """``rollout.multi_turn`` (verl's agent loop, ``verl/experimental/agent_loop/
    tool_agent_loop.py`` and ``trainer/config/rollout/rollout.yaml`` @b178a3cd): a task per
    trajectory (``--turn-schedule per-sample``, the verl preset's), the assistant and tool
    tokens in one ``response_length`` (``data.max_response_length``). ``max_assistant_turns``
    is an upper bound: every sample is taken to run all of them, the most the config allows
    (a trajectory ends earlier when the model calls no tool), as many as fit the budget;
    null (no limit) leaves one turn and a note. ``max_tool_response_length`` (256) cuts a
    tool's text in characters, so its tokens are at most that (a BPE token spans at least
    one character), per call up to ``max_parallel_calls``: their product is the observation
    bound set, the chat template's role tokens left out. The tool latency is not in the
    config (a note). ``max_user_turns`` caps the tool (and interaction) responses, so the
    assistant turns at one more (tool_agent_loop.py ends a trajectory once ``user_turns``
    reaches it); ``format`` (the tool-call parser) is cost-free."""
    r.raw(f"{ROLLOUT}.multi_turn.format")
    users = r.raw(f"{ROLLOUT}.multi_turn.max_user_turns", None)
    turns = r.raw(f"{ROLLOUT}.multi_turn.max_assistant_turns", None)
    chars = r.integer(f"{ROLLOUT}.multi_turn.max_tool_response_length", 256)
    calls = r.integer(f"{ROLLOUT}.multi_turn.max_parallel_calls", 1)
    if turns is None:
        q.note("rollout.multi_turn.enable with max_assistant_turns null (no limit): the turns "
               "depend on the model and its tools; priced as one turn (give --turns, "
               "--observation-tokens, --tool-latency)")  # fmt: skip
        return
    n, o = r.integer(f"{ROLLOUT}.multi_turn.max_assistant_turns", 1), chars * calls
    if users is not None:
        n = min(n, r.integer(f"{ROLLOUT}.multi_turn.max_user_turns", 0, lo=0) + 1)
    t = r.integer("data.max_response_length", 512)
    fit = max(1, min(n, (t + o) // (o + 1)))  # (N - 1) O + N <= T (placement.turns)
    q.convert(f"rollout.multi_turn.max_assistant_turns={n}", "--turns", fit,
              "assistant turns a sample, the upper bound taken" + (
                  f" ({fit}: as many as {t} response tokens hold with {o}-token tool "
                  "responses)" if fit < n else ""), 1)  # fmt: skip
    if fit > 1:
        q.convert(f"max_tool_response_length={chars} x max_parallel_calls={calls}",
                  "--observation-tokens", o, "tool tokens after each turn, at most (the text "
                  "cut in characters; the chat template's tokens left out)", 0)  # fmt: skip
        q.note("multi-turn rollouts: the tool latency is not in the config (give "
               "--tool-latency SECONDS; 0 taken)")  # fmt: skip
