"""A prompt that fills the engine's context: an error, as the engines refuse it.

vLLM refuses a decoder prompt of ``max_model_len`` tokens or more when it generates: a prompt
longer than the maximum model length, and one of exactly that length, which leaves no room for
the one output token every request asks for ("The decoder prompt (length N) plus the number of
requested output tokens (at least 1) is longer than the maximum model length", vLLM
vllm/v1/engine/input_processor.py ``_validate_prompt_len`` @009daaee; its
tests/v1/e2e/test_context_length.py pins both cases). SGLang refuses ``input_token_num >=
context_len`` ("The input (N tokens) is longer than the model's context length", python/sglang/
srt/managers/tokenizer_manager.py ``_validate_one_request``) unless ``--allow-auto-truncate``.
The engine's context is ``engine.context_length`` where given, else the checkpoint's
(``max_position_embeddings``: ``ModelSpec.max_context``). A model with learned position
embeddings (GPT-2, GPT-3: ``ModelSpec.n_positions``) keeps its note instead: the paper's
models, whose costs rlmcost extrapolates past their positions on purpose, saying that the
real model cannot run them (:meth:`~rlmcost.specs.ModelSpec.context_note`). A prompt
shorter than that whose response would run past it stays a note
(:meth:`~rlmcost.specs.ModelSpec.context_note`): the engine caps the response (``max_tokens``)
at what the context leaves, and the Run prices the response length it is given.
"""

from __future__ import annotations

from typing import Any

REFUSING = ("vllm", "sglang")
"""The engines that refuse such a prompt (module docstring); HF generate and Megatron-core's
engine are not checked here."""


def check_prompt_context(run: Any) -> None:
    """ValueError (the Run's validation turns it into a one-line SpecError) where ``run``'s
    prompt (S) fills its engine's context (module docstring), saying how to mend it."""
    from rlmcost.algorithms.catalog import get_algorithm
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.algorithms.options import DEFAULT_PROMPT_LEN
    from rlmcost.run.defaults import actor_spec

    dep = run.deployment
    kinds = {str(dep.engine.kind), *(str(g.engine.kind) for g in dep.groups
                                     if g.engine is not None)}  # fmt: skip
    if dep.ideal or not kinds & set(REFUSING):
        return
    alg = get_algorithm(run.algorithm.name)
    if alg.offline or not any(i.kind is Kind.GENERATE for i in alg.invocations):
        return
    spec = actor_spec(run.models.actor)
    if spec is None:
        return
    given = dep.engine.context_length
    if spec.n_positions and not given:
        return  # learned positions: extrapolated, with its note (module docstring)
    limit = given or spec.max_context
    s = run.workload.prompt_len or DEFAULT_PROMPT_LEN
    if not limit or s < limit:
        return
    if given:
        more = f", or a longer --context-length than {given}"
    else:
        more = (f", or a longer context: --model '{spec.name}[max_position_embeddings=N]' "
                "(as a framework overrides the checkpoint's config.json)")
    raise ValueError(
        f"--prompt-len {s} fills {spec.name}'s context of {limit:,} tokens, leaving no room "
        f"for one response token: vLLM and SGLang refuse such a prompt (vLLM input_processor.py "
        f"_validate_prompt_len, SGLang tokenizer_manager.py _validate_one_request); give "
        f"--prompt-len {limit - 1} or less{more}")  # fmt: skip
