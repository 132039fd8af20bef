"""RL algorithms as data: lists of model invocations per stage (seed paper §II-D, Table IV).

An :class:`~rlmcost.algorithms.model.Algorithm` is a tuple of
:class:`~rlmcost.algorithms.model.Invocation` s, each a role (actor, critic, reward, ...), a
stage (Generation, Assessment, Training), a kind (generate, forward, train) and a token count
over the workload letters B, K, S, T. PPO, GRPO and DPO and their variants (``catalog``)
differ only by their invocations; ``cost`` turns an algorithm into work, depth and memory per
stage (sympy), explicit and Big-O.

Light to import: ``kinds``, ``model``, ``catalog``, ``options`` and ``counts`` (token-count
formulas evaluated exactly with ``ast``) use no sympy, so the CLI can list and register the
algorithms at start-up; ``cost`` imports sympy. Numeric queries take an invocation's work and
depth from its compiled twin, :mod:`rlmcost.compiled.invocation`.
"""
