"""What to change when a deployment does not fit: the single changes that make it fit (each
evaluated: :func:`rlmcost.evaluation.advice.suggestions`), or the flags tried and the planner's
query for the fewest GPUs that fit (`rlmcost plan ... --min-gpus`); and, for one that fits on
a Megatron engine, how far its KV pool goes (:func:`render_pool_hints`)."""

from __future__ import annotations

from typing import Any


def render_hints(run: Any, e: Any) -> None:
    """The changes that make ``e`` (an estimate that does not fit) fit, each evaluated by
    ``run``; or the flags tried when none does."""
    from rlmcost.evaluation.advice import host_bound, suggestions, tried_flags
    from rlmcost.units import format_bytes

    found = suggestions(run, e)
    dist = getattr(getattr(e, "run", None), "workload", None)
    if dist is not None and dist.length_dist in (None, "fixed") and not e.deployment.ideal \
            and lengths_may_fit(e):  # fmt: skip
        line = length_hint(run, e)
        if line:
            print(line)
    for s in found:
        via = f" {s.framework_flags}." if s.framework_flags else ""
        print(f"  fits with {s.flags}: peak {format_bytes(s.peak_bytes_per_device)} per device."
              f"{via}")  # fmt: skip
    if not found and host_bound(e):
        print(host_hint(e))
    elif not found:
        tried = tried_flags(e)
        what = (f"no change of {', '.join(tried)}, alone or combined, makes it fit" if tried
                else "no change to try")  # fmt: skip
        more = "" if e.grouped else ", or place the models on groups (--groups)"
        cmd = plan_command(e)
        where = " of the run's pool (raise a count to search more)" if "--hardware" in cmd else ""
        print(f"  {what}: give more GPUs (--gpus){more}; `{cmd}` finds the fewest GPUs"
              f"{where} with a fitting deployment.")  # fmt: skip


def length_hint(run: Any, e: Any) -> str:
    """The line for ``e``, over the device at its maximum lengths: the longest sequence at
    which it fits (:func:`~rlmcost.evaluation.length_advice.fitting_lengths`, evaluated), or
    nothing where it fits at no length."""
    from rlmcost.evaluation.length_advice import fitting_lengths

    found = fitting_lengths(run, e)
    if found is None:
        return ""
    padded = bool(getattr(e.deployment.train, "padded", False))
    real = ("its micro-batches are padded to the prompt + the longest response, so its maximum "
            "lengths must be that short" if padded else "unpadded, a micro-batch holds its "
            "sequences' real tokens, so a run whose sequences average no more fits")  # fmt: skip
    return (f"  memory at the maximum lengths (every prompt at --prompt-len, every response at "
            f"--response-len: --length-dist fixed, the default): it fits at sequences of "
            f"{found.tokens:,} tokens or fewer ({found.flags()}, {found.share:.0%} of the "
            f"maxima): {real}; give their spread with --length-dist "
            f"lognormal:MEAN,SIGMA,MAX.")  # fmt: skip


def host_hint(e: Any) -> str:
    """What to do for ``e``, whose devices hold it but whose hosts do not, when no smaller
    offload fits (:func:`~rlmcost.evaluation.advice.host_changes`): more GPUs, over which
    ZeRO-3 and data parallelism spread the offloaded states and more nodes share them (the
    planner's query finds how many), and the host memory of the user's servers, which is a
    figure to state, not a mend (:mod:`rlmcost.placement.host_memory`)."""
    from rlmcost.evaluation.advice import tried_flags
    from rlmcost.placement.host_memory import HOST_FLAG

    tried = ", ".join(tried_flags(e))
    what = f"no change of {tried} fits both the devices and the host" if tried else \
        "nothing offloaded to keep on the devices"  # fmt: skip
    given = getattr(getattr(e, "run", None), "cluster", None)
    own = "" if given is None or given.host_memory_gib is None else " (as given)"
    return (f"  host memory, not the devices, is short: {what}; give more GPUs (--gpus: more "
            f"nodes share the offloaded states); `{plan_command(e)}` finds the fewest GPUs with "
            f"a fitting deployment. {HOST_FLAG} N states your servers' host memory per node "
            f"where it differs from the reference host{own}: the servers' figure, not a fix.")


LENGTH_TERMS = ("activations", "kv_cache", "logits", "rollout", "overhead")
"""Memory terms that shorter sequences can shrink (``MemoryBreakdown``; ``overhead`` for its
allocator slack): what a stage over capacity could give back at shorter lengths, at most."""


def lengths_may_fit(e: Any) -> bool:
    """Whether shorter sequences could make ``e`` fit: no stage over capacity is over by at
    least its peak's :data:`LENGTH_TERMS` (the weights, gradients and optimizer alone exceed
    the device whatever the lengths, e.g. PPO on Llama-3-70B on 8 H100s); with no stage over,
    whether a group is over its own device (mixed hardware), not a problem alone (an engine
    reservation without KV room, which lengths do not cause)."""
    over = [s for s in e.stages.values() if not s.fits]
    if not over:
        ev = getattr(e, "evaluation", None)
        return ev is not None and ev.shortfall_bytes > 0
    return all(s.shortfall_bytes < sum(getattr(s.peak.memory, t) for t in LENGTH_TERMS)
               for s in over)  # fmt: skip


def plan_command(e: Any) -> str:
    """The planner's query for the fewest GPUs that fit ``e``'s workload (its algorithm, model,
    hardware and batch; ``rlmcost plan --min-gpus``)."""
    from rlmcost.frameworks.presets import DEFAULT_FRAMEWORK

    i, run = e.inputs(), getattr(e, "run", None)
    k = f" -K {i['K']}" if i["K"] is not None else ""
    length = None if run is None else run.workload.length_dist
    dist = f" --length-dist {length}" if length is not None else ""
    fw = DEFAULT_FRAMEWORK.value if run is None else run.deployment.framework or "none"
    fw = "" if fw == DEFAULT_FRAMEWORK.value else f" --framework {fw}"  # the default: per family
    host = None if run is None else run.cluster.host_memory_gib  # the servers' host memory
    fw += "" if host is None else f" --host-memory-gib {host:g}"
    return (f"rlmcost plan {e.algorithm.name} -m {e.model} {plan_hardware(e)} -B {i['B']}{k} "
            f"-S {i['S']} -T {i['T']}{dist}{fw} --min-gpus")  # fmt: skip


def plan_hardware(e: Any) -> str:
    """The planner's hardware for ``e``: ``-H`` the run's accelerator, or, where its groups
    run on others (``--groups rollout=8@h20,actor+reference=8@h100``), the run's pool,
    ``--hardware h20:8,h100-sxm:8`` (each accelerator's GPUs, which `plan` splits among the
    groups: :mod:`rlmcost.plan.pool`)."""
    ev = getattr(e, "evaluation", None)
    fleet = ev.fleet if ev is not None else {}
    if not fleet or list(fleet) == [e.hardware.name]:
        return f"-H {e.hardware.name}"
    return "--hardware " + ",".join(f"{name}:{n}" for name, n in fleet.items())


def render_pool_hints(run: Any, e: Any) -> None:
    """For ``e`` (an estimate that fits) on a Megatron engine: the largest ``--kv-buffer-gib``
    that still fits (checked by evaluating it with ``run``) and the longest response the pool
    admits (:mod:`rlmcost.evaluation.pool_advice`); nothing for other engines."""
    from rlmcost.evaluation.pool_advice import largest_pool_gib, megatron, pool_response_len

    if not megatron(e) or not e.fits:
        return
    gib = largest_pool_gib(run, e)
    if gib is not None:
        print(f"largest KV pool that still fits: --kv-buffer-gib {gib:g} (Megatron-core "
              "buffer_size_gb per GPU).")  # fmt: skip
    admitted = pool_response_len(e)
    if admitted is not None:
        t, pool = admitted
        print(f"longest response the KV pool admits: {t:,} tokens (one sequence's KV blocks "
              f"within --kv-buffer-gib {pool:g} per GPU; a larger pool admits longer).")
