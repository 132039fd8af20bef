"""A prompt that fills the engine's context is refused, as vLLM and SGLang refuse it; a
response that would run past the context stays a note (the engine caps it)."""

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.run.spec import Run


def _run(prompt: int, actor: str = "llama-3.1-8b", algorithm: str = "grpo", **engine) -> Run:
    return Run.from_data({"algorithm": {"name": algorithm}, "models": {"actor": actor},
                          "workload": {"prompt_len": prompt, "response_len": 1024},
                          "cluster": {"gpus": 8},
                          "deployment": {"engine": engine} if engine else {}})  # fmt: skip


def test_prompt_at_the_context_is_refused():
    # vLLM vllm/v1/engine/input_processor.py _validate_prompt_len @009daaee (and its
    # tests/v1/e2e/test_context_length.py: 2048 tokens at max_model_len 2048 is refused,
    # 2047 allowed); Llama-3.1-8B's config.json: max_position_embeddings 131072
    with pytest.raises(SpecError, match=r"--prompt-len 131072 fills llama-3.1-8b's context of "
                       r"131,072 tokens.*give --prompt-len 131071 or less.*"
                       r"max_position_embeddings=N"):  # fmt: skip
        _run(131072)


def test_one_token_short_runs_with_its_note():
    run = _run(131071)  # the response past the context: a note, the engine caps max_tokens
    assert run.workload.prompt_len == 131071


def test_engine_context_and_override():
    # SGLang's --context-length is the engine's context (tokenizer_manager.py
    # _validate_one_request: input_token_num >= context_len refused)
    with pytest.raises(SpecError, match="--prompt-len 8191 or less, or a longer "
                       "--context-length than 8192"):  # fmt: skip
        _run(8192, kind="sglang", context_length=8192)
    # a longer context given as the checkpoint's override runs
    _run(131072, actor="llama-3.1-8b[max_position_embeddings=262144]")


def test_offline_algorithm_has_no_engine_to_refuse():
    _run(131072, algorithm="dpo")  # DPO generates nothing


def test_cli_one_line():
    result = CliRunner().invoke(app, ["grpo", "-m", "8b", "--gpus", "8", "--prompt-len",
                                      "131072"])  # fmt: skip
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "fills llama-3.1-8b's context" in result.output
