"""A --length-dist that gives its own lengths (uniform, lognormal, file) is not capped by
--response-len T (only fixed and reasoning are) nor by the model's context; where its longest
response passes either, the length note says so instead of pricing it in silence."""

from __future__ import annotations

import rlmcost


def _notes(dist: str, response_len: int = 1024) -> str:
    run = rlmcost.Run.from_data({
        "algorithm": {"name": "grpo"}, "models": {"actor": "8b"}, "cluster": {"gpus": 8},
        "workload": {"response_len": response_len, "length_dist": dist}})
    return " ".join(rlmcost.evaluate(run).to_json()["notes"])


def test_lognormal_without_max_passes_t_and_the_context():
    # lognormal:30000,1.5 over 512 responses: the last midpoint quantile, 1023/1024, is
    # exp(mu + 1.5 x 3.097) with mu = ln 30000 - 1.5^2 / 2: about 1.0e6 tokens, past T and
    # Llama-3.1-8B's 131,072 positions (config.json max_position_embeddings) less the prompt
    text = _notes("lognormal:30000,1.5")
    assert "the longest is past --response-len T = 1,024" in text
    assert "trained context of 131,072 tokens leaves 130,048 after the 1,024-token prompt" in text


def test_a_capped_distribution_says_nothing():
    text = _notes("lognormal:1024,1.0,2048", response_len=2048)
    assert "past --response-len" not in text and "trained context of" not in text
    # past T only: uniform's HI above T, within the context
    text = _notes("uniform:10,2000")
    assert "the longest is past --response-len T = 1,024" in text
    assert "trained context of" not in text
