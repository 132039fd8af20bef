"""Intra-model parallelism (seed paper §III): DP, TP, SP, CP, PP, EP, 3D/5D, ZeRO, checkpointing.

Kept import-free so that the CLI can read the layout enums cheaply; the modules are:

* ``layout``      the parallel configuration of one invocation (degrees, ZeRO, checkpointing);
* ``validate``    a layout against a model and a GPU count, with one-line fixes;
* ``shard``       what one rank holds: the TP shard of an ``Arch`` and the PP stage split;
* ``zero``        model-state memory per ZeRO/FSDP stage (§III-G1; Rajbhandari et al. 2020);
* ``activations`` saved activations per rank (Korthikanti et al. 2022) and recomputation;
* ``pipeline``    bubble fraction and in-flight micro-batches per schedule;
* ``memory``      bytes per rank by component for train / forward / generate;
* ``comm``        communication bytes per collective and rank, and their time on the links;
* ``cost``        Tables V-VIII: per-rank and global (work, depth, memory) of a training step.
"""
