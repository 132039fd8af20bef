"""The blocks to compile: every function of ``blocks_gen/``, its sizes and its source."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from rlmcost.frozen import dataclass


@dataclass(frozen=True)
class Block:
    """One generated function: ``name(a, *sizes)`` = ``build(arch, sizes)``."""

    name: str
    sizes: tuple[str, ...]
    build: Callable[..., Any]  # (arch, sizes: SimpleNamespace), lambdas may bind more defaults
    doc: str  # what it is, its unit and its source in the symbolic core
    defaults: tuple[tuple[str, int], ...] = ()


def shard(arch: Any, s: SimpleNamespace) -> Any:
    """``parallel.shard.tp_shard(arch, tp)`` with its padded vocabulary as ``vocab_tp`` (and
    Gemma 4 E's per-layer embedding table's as ``ple_vocab_tp``)."""
    from rlmcost.parallel.shard import tp_shard

    return tp_shard(arch, s.tp).with_(vocab=s.vocab_tp, ple_vocab=s.ple_vocab_tp)


def _dtype(nbytes: Any) -> Any:
    """A stand-in for ``choices.Dtype`` whose ``.bytes`` may be a symbol."""
    return SimpleNamespace(bytes=nbytes)


def blocks() -> list[Block]:
    """Every generated function, in output order."""
    from rlmcost import blocks as bl
    from rlmcost.choices import AttnCounting, Head, MlaDecode
    from rlmcost.parallel import activations as act
    from rlmcost.parallel.layout import Checkpointing

    tp1 = (("tp", 1),)
    out = [
        Block("params_attention_per_layer", ("tp",),
              lambda a, s: bl.params_attention_per_layer(shard(a, s)),
              "Parameters of one attention block on a TP rank (blocks.params_attention_per_layer"
              " of parallel.shard.tp_shard) [elements].", tp1),
        Block("params_linear_mixer_delta", ("tp",),
              lambda a, s: bl.params_linear_mixer_delta(shard(a, s)),
              "Parameters a linear-attention layer holds beyond an attention layer, on a TP rank "
              "(blocks.params_linear_mixer_delta) [elements].", tp1),
        Block("params_ffn_dense", ("tp",),
              lambda a, s: bl.params_ffn(shard(a, s), shard(a, s).d_ff, a.mlp_bias),
              "Parameters of one dense FFN on a TP rank, biases per mlp_bias "
              "(blocks.params_ffn) [elements].", tp1),
        Block("params_expert", ("tp",),
              lambda a, s: bl.params_routed_expert(shard(a, s)),
              "Parameters of one routed expert on a TP rank (blocks.params_routed_expert) "
              "[elements]; 0 for a dense model.", tp1),
        Block("params_routed_experts", ("tp",),
              lambda a, s: shard(a, s).n_experts * bl.params_routed_expert(shard(a, s)),
              "Parameters of all E routed experts of one MoE layer on a TP rank (as "
              "parallel.memory.stage_params counts them) [elements].", tp1),
        Block("params_moe_per_layer", ("tp",),
              lambda a, s: bl.params_moe_per_layer(shard(a, s)),
              "Parameters of one MoE FFN on a TP rank: router, routed and shared experts "
              "(blocks.params_moe_per_layer) [elements].", tp1),
        Block("params_norm", (), lambda a, s: bl.params_norm(a),
              "Parameters of one normalization layer (blocks.params_norm) [elements]."),
        Block("params_layer_dense", ("tp",), lambda a, s: bl.params_layer_dense(shard(a, s)),
              "Parameters of one dense layer on a TP rank (blocks.params_layer_dense) "
              "[elements].", tp1),
        Block("params_layer_moe", ("tp",), lambda a, s: bl.params_layer_moe(shard(a, s)),
              "Parameters of one MoE layer on a TP rank, all experts (blocks.params_layer_moe) "
              "[elements].", tp1),
        Block("params_embedding", ("tp",), lambda a, s: bl.params_embedding(shard(a, s)),
              "Token (vocab-parallel, padded) and position embedding on a TP rank "
              "(blocks.params_embedding) [elements].", tp1),
        Block("params_head_lm", ("tp",), lambda a, s: bl.params_head(shard(a, s), Head.LM),
              "LM head on a TP rank, 0 when tied (blocks.params_head) [elements].", tp1),
        Block("params_head_value", ("tp",), lambda a, s: bl.params_head(shard(a, s), Head.VALUE),
              "Value head d x 1 (blocks.params_head, Head.VALUE) [elements].", tp1),
        Block("params_lm", (), lambda a, s: bl.params(a, Head.LM),
              "|M| with the LM head, tied weights once (blocks.params) [elements]."),
        Block("params_value", (), lambda a, s: bl.params(a, Head.VALUE),
              "|M| with a value head, critic or reward model (blocks.params) [elements]."),
        Block("params_active_per_token", (), lambda a, s: bl.params_active_per_token(a),
              "Parameters one token touches, LM head (blocks.params_active_per_token) "
              "[elements]."),
        Block("work_linear_per_token", (), lambda a, s: bl.work_linear_per_token(a),
              "Forward FLOPs of one token through the body's projections "
              "(blocks.work_linear_per_token) [FLOP]."),
        Block("work_attention_per_token", ("context",),
              lambda a, s: bl.work_attention_per_token(a, s.context),
              "Forward attention FLOPs of one query over `context` keys, all layers "
              "(blocks.work_attention_per_token) [FLOP]."),
        Block("work_head_per_token_lm", (), lambda a, s: bl.work_head_per_token(a, Head.LM),
              "LM-head FLOPs of one token (blocks.work_head_per_token) [FLOP]."),
        Block("work_head_per_token_value", (),
              lambda a, s: bl.work_head_per_token(a, Head.VALUE),
              "Value-head FLOPs of one token (blocks.work_head_per_token) [FLOP]."),
        Block("work_decode_step", ("context", "seqs"),
              lambda a, s: bl.work_decode_step(a, s.context, s.seqs),
              "One decode step of `seqs` sequences at KV context `context` "
              "(blocks.work_decode_step) [FLOP].", (("seqs", 1),)),
        Block("work_decode_step_reference", ("context", "seqs"),
              lambda a, s: bl.work_decode_step(a, s.context, s.seqs, MlaDecode.REFERENCE),
              "One decode step, MLA in the reference form: kv_b_proj re-expands the cached "
              "latents (blocks.work_decode_step, MlaDecode.REFERENCE) [FLOP].", (("seqs", 1),)),
    ]  # fmt: skip
    for head in (Head.LM, Head.VALUE):
        out.append(
            Block(f"work_forward_per_token_{head.value}", ("context",),
                  lambda a, s, h=head: bl.work_forward_per_token(a, s.context, h),
                  f"C_f^tok: forward FLOPs of one token at `context`, {head.value} head "
                  "(blocks.work_forward_per_token) [FLOP].")
        )  # fmt: skip
        out.append(
            Block(f"depth_forward_{head.value}", ("context",),
                  lambda a, s, h=head: bl.depth_forward(a, s.context, h),
                  f"D_f: forward critical path at `context`, {head.value} head "
                  "(blocks.depth_forward) [levels].")
        )  # fmt: skip
        out.append(
            Block(f"depth_backward_{head.value}", ("context", "tokens"),
                  lambda a, s, h=head: bl.depth_backward(a, s.context, s.tokens, h),
                  f"D_b: backward critical path, dW reduced over `tokens`, {head.value} head "
                  "(blocks.depth_backward) [levels].")
        )  # fmt: skip
        out.append(
            Block(f"depth_train_{head.value}", ("context", "tokens"),
                  lambda a, s, h=head: bl.depth_train(a, s.context, s.tokens, h),
                  f"D_tr = D_f + D_b, dW reduced over `tokens`, {head.value} head "
                  "(blocks.depth_train) [levels].")
        )  # fmt: skip
    for counting in AttnCounting:
        c = counting.value
        for head in (Head.LM, Head.VALUE):
            h = head.value
            out.append(
                Block(f"work_forward_{c}_{h}", ("seqs", "seq"),
                      lambda a, s, k=counting, hd=head: bl.work_forward(a, s.seqs, s.seq, k, hd),
                      f"Teacher-forced forward of `seqs` x `seq` tokens, {c} attention, {h} "
                      "head (blocks.work_forward) [FLOP].")
            )  # fmt: skip
            out.append(
                Block(f"work_backward_{c}_{h}", ("seqs", "seq"),
                      lambda a, s, k=counting, hd=head: bl.work_backward(
                          a, s.seqs, s.seq, k, hd),
                      f"Backward (2 x forward) of `seqs` x `seq` tokens, {c} attention, {h} "
                      "head (blocks.work_backward) [FLOP].")
            )  # fmt: skip
            out.append(
                Block(f"work_train_{c}_{h}", ("seqs", "seq"),
                      lambda a, s, k=counting, hd=head: bl.work_train(a, s.seqs, s.seq, k, hd),
                      f"Training step (3 x forward) of `seqs` x `seq` tokens, {c} attention, "
                      f"{h} head (blocks.work_train) [FLOP].")
            )  # fmt: skip
        out.append(
            Block(f"work_prefill_{c}", ("prompt", "seqs"),
                  lambda a, s, k=counting: bl.work_prefill(a, s.prompt, s.seqs, k),
                  f"Prefill of `seqs` prompts of `prompt` tokens, {c} attention "
                  "(blocks.work_prefill) [FLOP].", (("seqs", 1),))
        )  # fmt: skip
        out.append(
            Block(f"work_rollout_{c}", ("prompt", "response"),
                  lambda a, s, k=counting: bl.work_rollout(a, s.prompt, s.response, k),
                  f"C_gen^roll: one rollout, prefill ({c}) + decode steps "
                  "(blocks.work_rollout) [FLOP].")
        )  # fmt: skip
        for ckpt in (Checkpointing.SELECTIVE, Checkpointing.FULL):
            out.append(
                Block(f"work_recompute_{ckpt.value}_{c}", ("seqs", "seq"),
                      lambda a, s, k=counting, ck=ckpt: act.work_recompute(
                          a, s.seqs, s.seq, ck, k),
                      f"Forward FLOPs the backward recomputes under {ckpt.value} checkpointing, "
                      f"{c} attention (parallel.activations.work_recompute) [FLOP].")
            )  # fmt: skip
    out += [
        Block("depth_prefill", ("prompt",), lambda a, s: bl.depth_prefill(a, s.prompt),
              "Prefill critical path (blocks.depth_prefill) [levels]."),
        Block("depth_decode_step", ("context",),
              lambda a, s: bl.depth_decode_step(a, s.context),
              "One decode step's critical path (blocks.depth_decode_step) [levels]."),
        Block("depth_generation", ("prompt", "response"),
              lambda a, s: bl.depth_generation(a, s.prompt, s.response),
              "D_gen, exact closed form (blocks.depth_generation) [levels]."),
        Block("depth_generation_bound", ("prompt", "response"),
              lambda a, s: bl.depth_generation(a, s.prompt, s.response, closed_form=False),
              "D_prefill(S) + T D_dec(S + T), the Big-O form (blocks.depth_generation) "
              "[levels]."),
        Block("memory_kv_cache", ("tokens", "seqs", "tp"),
              lambda a, s: bl.memory_kv_cache(shard(a, s), s.tokens, s.seqs),
              "M_KV of `seqs` sequences of `tokens` tokens, all layers, on a TP rank; a "
              "sliding layer keeps min(tokens, W - 1) positions (blocks.memory_kv_cache) "
              "[elements].", (("seqs", 1), ("tp", 1))),
        Block("kv_cache_per_token_layer", ("tp",),
              lambda a, s: shard(a, s).kv_cache_width,
              "K and V elements of one position in one layer on a TP rank "
              "(arch.Arch.kv_cache_width, as blocks.memory_kv_cache counts them) [elements].",
              tp1),
        Block("memory_inference_buffer", ("tokens", "tp"),
              lambda a, s: bl.memory_inference_buffer(shard(a, s), s.tokens),
              "M_Inf: one layer's forward transients for `tokens` positions on a TP rank "
              "(blocks.memory_inference_buffer) [elements].", tp1),
        Block("memory_activations_paper", ("tokens",),
              lambda a, s: bl.memory_activations_paper(a, s.tokens),
              "M_Act, the paper's leading term tokens x L x d (blocks.memory_activations_paper) "
              "[elements]."),
        Block("memory_logits", ("tokens",), lambda a, s: bl.memory_logits(a, s.tokens),
              "Logits of `tokens` positions (blocks.memory_logits) [elements]."),
        Block("activation_bytes_per_token_layer", ("act_bytes",),
              lambda a, s: bl.activation_bytes_per_token_layer(a, _dtype(s.act_bytes)),
              "Bytes one token's layer saves, averaged over the layers, no TP "
              "(blocks.activation_bytes_per_token_layer) [bytes].", (("act_bytes", 2),)),
        Block("memory_activations_bytes", ("tokens", "act_bytes"),
              lambda a, s: bl.memory_activations_bytes(a, s.tokens, _dtype(s.act_bytes)),
              "M_Act of `tokens` positions, all layers and the final-norm input "
              "(blocks.memory_activations_bytes) [bytes].", (("act_bytes", 2),)),
    ]  # fmt: skip
    for ckpt in Checkpointing:
        for seq_par in (False, True):
            for moe in (False, True):
                name = (f"saved_bytes_per_token_layer_{ckpt.value}"
                        f"{'_sp' if seq_par else ''}_{'moe' if moe else 'dense'}")  # fmt: skip
                out.append(
                    Block(name, ("tp", "act_bytes", "fused_glu"),
                          lambda a, s, c=ckpt, q=seq_par, m=moe:
                              act.saved_bytes_per_token_layer(a, s.tp, q, c, m,
                                                              _dtype(s.act_bytes), s.fused_glu),
                          f"Bytes one token's {'MoE' if moe else 'dense'} layer keeps for the "
                          f"backward on a TP rank, checkpointing {ckpt.value}, sequence "
                          f"parallelism {'on' if seq_par else 'off'} "
                          "(parallel.activations.saved_bytes_per_token_layer) [bytes].",
                          (("tp", 1), ("act_bytes", 2), ("fused_glu", 0)))
                )  # fmt: skip
    return out
