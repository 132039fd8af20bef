"""SGLang's running-request cap when ``--max-running-requests`` is not given.

SGLang sizes two pools at start-up (sgl-project/sglang ``model_executor/model_runner.py``
``ModelRunner.init_memory_pool``; the same expression from v0.3 through v0.4.6.post4, the
release AReaL v0.3 pins, and v0.5's ``model_runner_kv_cache_mixin.py``):

* the KV pool, ``max_total_num_tokens`` token slots (what the reservation leaves, page size 1);
* the request pool (``ReqToTokenPool``), one row of ``context_len`` token indices per request,
  ``max_num_reqs = min(max(int(max_total_num_tokens / context_len * 512), 2048), 4096)`` rows
  when ``max_running_requests`` is unset (otherwise that many);

and the scheduler admits while fewer than ``max_running_requests`` run
(``managers/scheduler.py`` ``get_new_batch_prefill``: ``running_bs + len(can_run_list) >=
max_running_requests`` marks the batch full), where ``managers/tp_worker.py`` sets
``max_running_requests = min(max_total_num_tokens // 2 if server_args.max_running_requests is
None else server_args.max_running_requests, req_to_token_pool.size)``.

``context_len`` is the server's ``--context-length`` if given, else the checkpoint's
(``configs/model_config.py`` ``get_context_length``: ``max_position_embeddings`` and its kin).
AReaL v0.3 passes ``context_length: 32768`` (``realhf/api/cli_args.py`` ``SGLangConfig`` at
tag v0.3.0); verl's SGLang rollout (v0.4-v0.5 ``sglang_rollout.py``) and slime leave it to the
checkpoint.

Deviation: v0.3-v0.4 allocate ``max_num_reqs + 1`` request rows (one for CUDA-graph padding),
so their cap can be one request above the value here (4097 rather than 4096); later releases
subtract it again (``req_to_token_pool.size - 1``).
"""

from __future__ import annotations

from rlmcost.errors import SpecError

REQ_ROWS_PER_CONTEXT = 512
"""Request rows per full-context sequence the KV pool holds: the ``* 512`` of
``ModelRunner.init_memory_pool`` (module docstring)."""

REQ_ROWS_MIN = 2048
"""Fewest request rows SGLang allocates by default: the ``max(..., 2048)`` there."""

REQ_ROWS_MAX = 4096
"""Most request rows SGLang allocates by default: the ``min(..., 4096)`` there."""


def request_rows(pool_tokens: int, context_len: int) -> int:
    """``ReqToTokenPool`` rows of an SGLang server with ``pool_tokens`` KV slots and a context
    of ``context_len`` tokens, ``max_running_requests`` unset (module docstring).

    >>> request_rows(500_000, 32768), request_rows(100_000, 32768), request_rows(700_000, 131072)
    (4096, 2048, 2734)
    """
    if pool_tokens < 0 or context_len < 1:
        raise SpecError(f"an SGLang server needs a KV pool of >= 0 tokens and a context of >= 1 "
                        f"token, got {pool_tokens} and {context_len}")  # fmt: skip
    rows = int(pool_tokens / context_len * REQ_ROWS_PER_CONTEXT)
    return min(max(rows, REQ_ROWS_MIN), REQ_ROWS_MAX)


def max_running_requests(pool_tokens: int, context_len: int, given: int | None = None) -> int:
    """The requests one SGLang server runs at once: ``given`` (``--max-running-requests``; the
    request pool is then that large) or ``min(pool_tokens // 2, request_rows)``, at least 1.

    >>> max_running_requests(500_000, 32768), max_running_requests(3000, 32768)
    (4096, 1500)
    >>> max_running_requests(500_000, 32768, given=256)
    256
    """
    if given is not None:
        return given
    return max(1, min(pool_tokens // 2, request_rows(pool_tokens, context_len)))
