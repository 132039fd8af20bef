"""SGLang's defaults as the engine sets them: the running-request cap it derives from its KV pool
(rlmcost.deployment.sglang_limits) and the waiting-queue order of ``schedule_policy``
(rlmcost.placement.sglang_admit.lpm_order).

Sources: sgl-project/sglang ``model_executor/model_runner.py`` ``init_memory_pool``
(``max_num_reqs = min(max(int(max_total_num_tokens / context_len * 512), 2048), 4096)`` when
``max_running_requests`` is unset) and ``managers/tp_worker.py`` (``max_running_requests =
min(max_total_num_tokens // 2 or the server argument, req_to_token_pool.size)``), the same
expressions from v0.3 to v0.5; ``managers/schedule_policy.py`` ``SchedulePolicy.calc_priority``
(``_determine_active_policy``: lpm is fcfs above 128 waiting requests;
``_compute_prefix_matches``: ``IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD`` and
``..._DEPRIORITIZE_THRESHOLD`` 32; ``_sort_by_longest_prefix``: deprioritized requests last);
AReaL v0.3 ``realhf/api/cli_args.py`` ``SGLangConfig`` (context_length 32768,
max_running_requests None, schedule_policy "lpm").
"""

from __future__ import annotations

import json
from collections import deque

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.engine import EngineSpec
from rlmcost.deployment.sglang_limits import max_running_requests, request_rows
from rlmcost.errors import SpecError
from rlmcost.placement.prefix_share import PrefixShare
from rlmcost.placement.sglang_admit import LPM_QUEUE_LIMIT, TokenPool, lpm_order, sglang_admit
from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_frameworks import recipe

runner = CliRunner()


def test_request_rows_are_512_per_full_context_between_2048_and_4096():
    # int(tokens / context * 512), clamped to [2048, 4096] (model_runner.py init_memory_pool)
    assert request_rows(6 * 32768, 32768) == 3072
    assert request_rows(2 * 32768, 32768) == 2048  # 1024 below the floor
    assert request_rows(100 * 32768, 32768) == 4096  # 51,200 above the ceiling
    assert request_rows(1_000_000, 131_072) == 3906  # int(3906.25)


def test_max_running_requests_is_the_smaller_of_half_the_pool_and_the_request_rows():
    # tp_worker.py: min(max_total_num_tokens // 2, req_to_token_pool.size)
    assert max_running_requests(6 * 32768, 32768) == 3072
    assert max_running_requests(3001, 32768) == 1500  # 3001 // 2 below 2048 rows
    assert max_running_requests(6 * 32768, 32768, given=300) == 300  # the argument wins
    with pytest.raises(SpecError):
        request_rows(1000, 0)


def test_lpm_sends_an_uncached_groups_siblings_back_and_a_cached_group_first():
    # groups of 4: group 0 runs (its prompt cached), groups 1 and 2 do not
    q = deque([(8, 0), (9, 0), (1, 0), (10, 0), (4, 0), (5, 0)])
    lpm_order(q, 4, {0: 3}, 500)
    # 1 matches 500 cached tokens: first; 8 and 4 first of their groups (in arrival order);
    # 9, 10 share the prompt with 8 (>= 32 tokens in the waiting queue), 5 with 4: last
    assert [i for i, _ in q] == [1, 8, 4, 9, 10, 5]


def test_lpm_is_fcfs_above_128_waiting_requests_and_for_short_prompts():
    many = deque((i, 0) for i in range(LPM_QUEUE_LIMIT + 1))
    lpm_order(many, 2, {}, 500)
    assert [i for i, _ in many] == list(range(LPM_QUEUE_LIMIT + 1))
    short = deque([(0, 0), (1, 0), (2, 0)])
    lpm_order(short, 2, {}, 31)  # siblings share 31 < 32 tokens: no in-batch check hit
    assert [i for i, _ in short] == [0, 1, 2]


def test_lpm_admits_one_sample_of_each_group_before_the_siblings():
    # two groups of two, prompt 100 (99 shared in the radix cache), 50 new tokens each, a pool
    # of 300 token slots, one request per prefill batch: each admission needs 100 + 50 < free
    # - 0.7 x 50 per running request, so two fit (150 < 300 - 100 - 35), a third does not
    # (150 >= 300 - 200 - 70 less what the first two hold). fcfs takes 0, 1 (group 0), lpm
    # 0 and 2 (the first of each group; 1 and 3 go back)
    share = PrefixShare(2, 1, same_step=False)

    def first(lpm: bool) -> set[int]:
        pool = TokenPool(300, 50, round_tokens=1, share=share, lpm=lpm)
        s = sglang_admit([50, 50, 50, 50], 100, 4, pool)
        return {x.seq for x in s.segments if x.start == 0}

    assert first(False) == {0, 1}
    assert first(True) == {0, 2}


def test_lpm_and_a_context_length_need_an_sglang_engine():
    with pytest.raises(ValueError, match="--engine sglang"):
        EngineSpec(kind="vllm", schedule_policy="lpm")
    with pytest.raises(ValueError, match="--engine sglang"):
        EngineSpec(kind="vllm", context_length=32768)
    assert EngineSpec(kind="sglang", schedule_policy="lpm", context_length=32768).max_seqs == 256
    out = runner.invoke(app, ["grpo", "-m", "gpt-2", "--schedule-policy", "lpm"])
    assert out.exit_code == 2 and "Traceback" not in out.output


def _rollout_slots(*flags: str) -> int:
    # GPT-2 on one H100 holds about two million KV tokens: 2,048 sequences of 128 + 256
    # tokens (each reserving at most 128 + 256 for SGLang) are bounded by the running cap only
    args = ["grpo", "-m", "gpt-2", "-B", "512", "-K", "4", "-S", "128", "-T", "256", "--json",
            "--reward", "rule", "--groups", "rollout=1,actor+reference=1", *flags]  # fmt: skip
    out = runner.invoke(app, args, env={"COLUMNS": "160"})
    assert out.exit_code == 0, out.output
    g = next(g for g in json.loads(out.stdout)["placement_detail"]["groups"]
             if g["name"] == "rollout")  # fmt: skip
    return int(g["jobs"][0]["rollout"]["slots_per_replica"])


def test_an_sglang_engine_runs_its_derived_cap_and_vllm_its_own():
    # SGLang: min(pool // 2, 4096 rows: the pool holds > 8 contexts of GPT-2's 1,024 tokens),
    # so all 2,048 sequences run at once, under NeMo RL's preset too (its 1024 is vLLM's
    # LLM_CLASS default); a given --max-num-seqs is SGLang's --max-running-requests; vLLM:
    # EngineArgs' 256 without a framework, NeMo RL's vllm.LLM 1024 on an H100
    assert _rollout_slots("--engine", "sglang") == 2048
    assert _rollout_slots("--engine", "sglang", "--framework", "none") == 2048
    assert _rollout_slots("--engine", "sglang", "--max-num-seqs", "256") == 256
    assert _rollout_slots("--framework", "none") == 256
    assert _rollout_slots() == 1024


@pytest.mark.parametrize("record", [r for r in load_runs()["runs"] if r["framework"] == "areal"],
                         ids=lambda r: r["id"])  # fmt: skip
def test_areal_runs_sglang_with_its_context_length_and_lpm(record):
    # realhf/api/cli_args.py SGLangConfig at v0.3.0: context_length 32768, schedule_policy lpm
    q = recipe(record).query
    assert q is not None
    argv = q.argv()
    flags = dict(zip(argv, [*argv[1:], ""], strict=True))
    assert (flags["--context-length"], flags["--schedule-policy"]) == ("32768", "lpm")
    assert "--max-num-seqs" not in flags  # max_running_requests unset: SGLang's own
