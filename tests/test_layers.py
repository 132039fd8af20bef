"""Layers you can see in ``ls``: no module imports from a layer above its own.

Every module under ``rlmcost/`` is parsed with ``ast``; every import statement counts (module
level, inside functions, under ``TYPE_CHECKING``), and importing a module counts as importing
the packages above it (their ``__init__`` runs first). ``MODULE_LAYER`` maps a module-name prefix to
its layer (the longest matching prefix wins); ``LAYERS`` orders the layers bottom to top, after
DESIGN.md's layer picture and the import graph of the code. Imports between different prefixes
of one layer are allowed in one direction only (no cycle). The package root imports nothing:
its lazy attributes (``rlmcost.estimate``, ``rlmcost.plan``) resolve through ``importlib``.

A new module inside a mapped package needs nothing; a new top-level module or package needs one
line in ``MODULE_LAYER``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rlmcost"

# Bottom to top.
LAYERS = (
    "root",  # the package root: __version__ and lazy attributes
    "base",  # errors, choices
    "notation",  # symbols, exact log2 arithmetic
    "arch",
    "specs",  # pydantic specs and built-in data; exact symbolic substitution (evaluate.py)
    "blocks",  # Table III, and its numeric form (compiled/ blocks_gen, arch, blocks)
    "algorithms",  # algorithms as invocation lists; the optional calibration harness
    "parallel",
    "compiled",  # numeric twins of the invocation cost, the memory model and training work
    "perf",  # roofline bound (timing.py) and predicted time (perf/)
    "deployment",  # what a user launches: its spec and memory terms
    "run",  # the query object
    "placement",
    "evaluation",  # one evaluation behind every query, and advice built on it
    "views",  # per-query reports, the planner, framework presets and importers
    "tables",
    "cli",
)

MODULE_LAYER = {
    "rlmcost": "root",
    "rlmcost.errors": "base",
    "rlmcost.choices": "base",
    "rlmcost.symbols": "notation",
    "rlmcost.logs": "notation",
    "rlmcost.arch": "arch",
    "rlmcost.specs": "specs",
    "rlmcost.substitute": "specs",
    "rlmcost.units": "base",
    "rlmcost.frozen": "base",
    "rlmcost.memo": "base",
    "rlmcost.blocks": "blocks",
    "rlmcost.algorithms": "algorithms",
    "rlmcost.calibrate": "algorithms",
    "rlmcost.parallel": "parallel",
    "rlmcost.compiled": "blocks",  # the package and its numeric blocks (runtime, blocks_gen, ...)
    "rlmcost.compiled.generate": "compiled",
    "rlmcost.compiled.invocation": "compiled",
    "rlmcost.compiled.memory": "compiled",
    "rlmcost.compiled.sweep": "compiled",
    "rlmcost.compiled.train_step": "compiled",
    "rlmcost.timing": "perf",
    "rlmcost.perf": "perf",
    # `rlmcost validate` predicts the RL rows by the whole evaluation: a view, not a perf model.
    "rlmcost.perf.validate": "views",
    "rlmcost.perf.validate_rl": "views",
    "rlmcost.deployment": "deployment",
    "rlmcost.run": "run",
    "rlmcost.placement": "placement",
    "rlmcost.evaluation.deployment": "evaluation",
    "rlmcost.evaluation": "evaluation",
    "rlmcost.reports": "views",
    "rlmcost.plan": "views",
    # Framework presets are deployment data (a Run's defaults come from them); the importers
    # of frameworks' configs are views.
    "rlmcost.frameworks": "deployment",
    **{f"rlmcost.frameworks.{m}": "views"
       for m in ("argv", "ckpt_quant", "config", "cpu_optimizer", "launch_scripts",
                 "megatron_split", "miles_lora", "miles_model_args", "model_overrides",
                 "model_path",
                 "moe_capacity", "moe_dispatcher", "nemo_rl", "nemo_rl_batching",
                 "nemo_rl_defaults", "nemo_rl_env", "nemo_rl_lora",
                 "nemo_rl_engine", "nemo_rl_megatron", "nemo_rl_vllm", "nemo_rl_worker",
                 "openrlhf", "openrlhf_dpo", "openrlhf_layouts", "p2p_overlap", "result",
                 "shell_arith", "shell_read",
                 "shell_checkout", "shell_launch", "shell_lexer", "shell_nested", "shell_paths",
                 "shell_script", "shell_test", "shell_words", "slime", "slime_args",
                 "slime_layout", "trl", "trl_launch", "units",
                 "verl", "verl_batches", "verl_engine", "verl_glu", "verl_lora", "verl_recompute",
                 "verl_versions", "virtual_pipeline")},
    "rlmcost.tables": "tables",
    "rlmcost.cli": "cli",
    "rlmcost.__main__": "cli",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path) -> set[str]:
    """The rlmcost modules one module imports; ``from a import b`` names ``a.b`` when that is a
    module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
            found.update(subs or [target])
            if len(subs) < len(node.names):
                found.add(target)
    # Importing a module runs its packages' __init__ first.
    parents = {m.rsplit(".", n)[0] for m in found for n in range(1, m.count(".") + 1)}
    return {m for m in found | parents if m == "rlmcost" or m.startswith("rlmcost.")}


def prefix_of(module: str) -> str | None:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in MODULE_LAYER:
            return prefix
    return None


def level(module: str) -> int:
    prefix = prefix_of(module)
    assert prefix is not None, module
    return LAYERS.index(MODULE_LAYER[prefix])


EDGES = {(m, t) for m, p in MODULES.items() for t in imported(m, p)}


def test_every_module_has_a_layer():
    unmapped = sorted(m for m in MODULES if prefix_of(m) is None)
    # Independent: the files on disk; each needs an entry in MODULE_LAYER.
    assert unmapped == [], f"add these to MODULE_LAYER: {unmapped}"
    assert set(MODULE_LAYER.values()) <= set(LAYERS)


def test_the_import_scan_sees_every_kind_of_import():
    # Independent: the source text of these modules (a TYPE_CHECKING import, a function-level
    # import, a `from package import module`).
    assert ("rlmcost.timing", "rlmcost.calibrate.profile") in EDGES
    assert ("rlmcost.perf.validate_rl", "rlmcost.evaluation.deployment") in EDGES
    assert ("rlmcost.deployment", "rlmcost.deployment.spec") in EDGES


def test_no_module_imports_from_a_higher_layer():
    upward = sorted(
        f"{m} ({MODULE_LAYER[prefix_of(m)]}) -> {t} ({MODULE_LAYER[prefix_of(t)]})"  # type: ignore[index]
        for m, t in EDGES
        if level(t) > level(m)
    )
    assert upward == [], "upward imports:\n" + "\n".join(upward)


def test_no_cycle_within_a_layer():
    graph: dict[str, set[str]] = defaultdict(set)
    for m, t in EDGES:
        a, b = prefix_of(m), prefix_of(t)
        if a and b and a != b and level(m) == level(t):
            graph[a].add(b)
    cycles = sorted(
        f"{a} <-> {b}" for a in graph for b in graph[a] if a < b and reaches(graph, b, a)
    )
    assert cycles == [], "cycles within a layer: " + ", ".join(cycles)


def reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        todo.extend(n for n in graph.get(node, ()) if n not in seen)
        seen.update(graph.get(node, ()))
    return False
