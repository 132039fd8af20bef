"""Chunked prefill of a prompt longer than a chunk (``rlmcost.perf.generation.Engine.chunk_s``).

Source: vLLM chunked prefill (``vllm/v1/attention/backends/flash_attn.py``: a chunk's queries
attend to the whole computed context, ``seqused_k``), so the chunks of a prompt of S tokens
together do its S (S + 1) / 2 causal pairs, not each chunk's own c (c + 1) / 2."""

from __future__ import annotations

import pytest

from rlmcost.perf.efficiency import Device
from rlmcost.perf.generation import Engine
from rlmcost.specs import get_hardware, get_model
from rlmcost.specs.workload import Workload


def _engine() -> Engine:
    arch = get_model("llama-3.1-8b").arch()
    return Engine(arch, Device(get_hardware("h100-sxm"), Workload().compute_dtype))


def test_a_chunk_of_a_long_prompt_attends_its_prefix() -> None:
    e = _engine()
    c, prompt = 2048, 4 * 2048
    per_pair = 4 * int(e.shard.n_heads) * int(e.arch.head_dim)
    layers = int(e.arch.n_layers)
    # the same chunk, alone (its own prompt) and as a quarter of a 4-chunk prompt: they differ
    # by the attention of the prefix pairs only (GEMMs, norms, KV writes are the chunk's)
    alone = e.chunk_s(c, c)
    inner = e.chunk_s(c, prompt)
    fa = e.device.flash_attention_s
    extra = layers * (fa(per_pair * (c * (prompt + 1) // 2), backward=False)
                      - fa(per_pair * (c * (c + 1) // 2), backward=False))  # fmt: skip
    assert inner - alone == pytest.approx(extra)
    assert inner > alone


def test_the_chunks_of_a_prompt_do_its_causal_pairs() -> None:
    c, prompt = 2048, 4 * 2048
    # four chunks of c (prompt + 1) / 2 pairs: the prompt's S (S + 1) / 2
    assert 4 * (c * (prompt + 1) // 2) == prompt * (prompt + 1) // 2
