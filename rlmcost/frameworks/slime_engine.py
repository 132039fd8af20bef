"""slime's SGLang engines as its launch arguments set them (``--rollout-num-gpus-per-engine``,
``--sglang-*``): their TP, memory fraction, requests in flight, data-parallel attention and
speculative decoding; read for :mod:`rlmcost.frameworks.slime_layout`'s placement."""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.frameworks.slime_args import WHERE

SERVER_CONCURRENCY = 512
"""slime's ``--sglang-server-concurrency`` default (slime/backends/sglang_utils/arguments.py
at 624b824a): the rollout's semaphore admits that many requests per engine
(slime/rollout/sglang_rollout.py line 94, ``sglang_server_concurrency x
get_rollout_num_engines(args)``, spread over the engines by the router)."""


def _requests_in_flight(r: Reader, q: ImportedQuery) -> None:
    """Sequences an engine decodes at once at most (``--max-num-seqs``): slime's request
    semaphore per engine (:data:`SERVER_CONCURRENCY`), or SGLang's own
    ``--sglang-max-running-requests`` where that is lower; the KV cache may bound it further
    (rlmcost's engine model)."""
    cap = r.integer("sglang-server-concurrency", SERVER_CONCURRENCY)
    running = r.integer("sglang-max-running-requests", None)
    given = f"--sglang-server-concurrency {cap}"
    if running is not None and running < cap:
        cap, given = running, f"--sglang-max-running-requests {running}"
    q.convert(given, "--max-num-seqs", cap, "requests one SGLang engine holds at once: slime's "
              "semaphore per engine (slime/rollout/sglang_rollout.py)")  # fmt: skip


def _dp_attention(r: Reader, q: ImportedQuery, tp: int) -> None:
    """``--sglang-enable-dp-attention --sglang-dp-size N`` (ServerArgs of each engine):
    ``--dp-attention N``; ``dp_size`` without DP attention is refused, the vocabulary head's
    DP split (``--sglang-enable-dp-lm-head``) noted, not modelled."""
    size = r.integer("sglang-dp-size", 1)
    if not r.flag("sglang-enable-dp-attention", False):
        if size > 1:
            raise SpecError(f"{WHERE}: --sglang-dp-size {size} without "
                            "--sglang-enable-dp-attention: SGLang's data-parallel replicas of "
                            "a server; rlmcost models dp_size only with DP attention")
        return
    if size > 1:
        q.convert(f"--sglang-enable-dp-attention --sglang-dp-size {size}", "--dp-attention",
                  size, f"SGLang's data-parallel attention: {size} attention ranks of "
                  f"{tp}/{size} GPUs per engine, each with its requests' KV; the MoE / FFN "
                  "layers over all the engine's GPUs (python/sglang/srt/layers/"
                  "dp_attention.py)")  # fmt: skip
    if r.flag("sglang-enable-dp-lm-head", False):
        q.note("--sglang-enable-dp-lm-head: SGLang splits the vocabulary head over the "
               "attention TP ranks; rlmcost keeps it over the engine's TP")


def engine(r: Reader, q: ImportedQuery) -> None:
    """SGLang engines of ``--rollout-num-gpus-per-engine`` GPUs (its tp_size), with
    ``--sglang-mem-fraction-static`` and ``--sglang-kv-cache-dtype``; EAGLE / NEXTN speculation
    on a checkpoint with an MTP layer as rlmcost's MTP drafts (``--sglang-speculative-num-steps``
    draft tokens per step at ``eagle_topk`` 1)."""
    q.set("--engine", "sglang")
    tp = r.integer("rollout-num-gpus-per-engine", 1)
    q.convert(f"--rollout-num-gpus-per-engine {tp}", "--rollout-tp", tp,
              "GPUs per SGLang engine (its tp_size)")  # fmt: skip
    frac = r.fraction("sglang-mem-fraction-static", None)
    if frac is not None:
        q.convert(f"--sglang-mem-fraction-static {frac:g}", "--gpu-memory-utilization", frac,
                  "SGLang's static memory fraction (weights and KV pool)")  # fmt: skip
    _requests_in_flight(r, q)
    _dp_attention(r, q, tp)
    n = r.integer("mtp-num-layers", 0, lo=0)
    r.number("mtp-loss-scaling-factor", 0.1)  # scales a loss: cost-free
    if r.flag("enable-mtp-training", False) and n:  # slime/utils/arguments.py asserts the depths
        q.convert(f"--enable-mtp-training --mtp-num-layers {n}", "--mtp-layers", n,
                  "MTP depths Megatron trains beside the model for the engines' MTP drafts "
                  "(slime/backends/megatron_utils/model.py passes the MTP labels)")  # fmt: skip
    elif n:
        q.note(f"--mtp-num-layers {n} without --enable-mtp-training: Megatron builds the MTP "
               "block (model_provider.py) and its forward runs untrained; not priced")
    if r.text("custom-generate-function-path", None):  # slime/rollout/sglang_rollout.py
        q.note("--custom-generate-function-path: the function replaces slime's single-turn "
               "generate (an agent's turns and tool calls are its own); priced as one turn: "
               "give --turns, --observation-tokens, --tool-latency for a multi-turn agent")
    kv = r.text("sglang-kv-cache-dtype", "auto")
    if kv != "auto":  # docs/en/advanced/low-precision.md "FP8 KV Cache for Rollout"
        q.convert(f"--sglang-kv-cache-dtype {kv}", "--kv-cache-dtype", kv,
                  "SGLang's KV-cache dtype (fp8_e4m3 / fp8_e5m2: one byte an element)")
    if r.integer("sglang-ep-size", 1) > 1:
        q.note("--sglang-ep-size: SGLang's expert parallelism inside an engine; rlmcost's "
               "engine splits the experts tensor-parallel over its GPUs (the same weight bytes "
               "per GPU, no all-to-all)")  # fmt: skip
    algo = r.text("sglang-speculative-algorithm", None)
    steps = r.integer("sglang-speculative-num-steps", None)
    topk = r.integer("sglang-speculative-eagle-topk", 1)
    r.integer("sglang-speculative-num-draft-tokens", None)
    if algo is None:
        return
    if algo.upper() in ("EAGLE", "NEXTN") and steps and topk == 1:
        q.set("--speculative-tokens", steps)
        q.set("--speculative-draft", "mtp")
        q.note(f"--sglang-speculative-algorithm {algo} with {steps} steps, topk 1: the "
               "checkpoint's MTP layer drafts that many tokens per step (--speculative-draft "
               "mtp; a model without one is refused)")  # fmt: skip
    else:
        q.note(f"--sglang-speculative-algorithm {algo}"
               + (f" (eagle topk {topk})" if topk != 1 else "")
               + ": not modelled; give --speculative-tokens and --speculative-draft")
