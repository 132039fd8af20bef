"""Each framework's preset as data, one module per framework (:mod:`.verl`, :mod:`.openrlhf`,
:mod:`.trl`, :mod:`.nemo_rl`, :mod:`.slime`), each exporting its ``PRESET`` with the sources of
every entry; :mod:`rlmcost.frameworks.presets` gathers them into ``PRESETS`` and holds the
lookups. Imports nothing itself: the package stays as light as its modules (dataclasses and
enums only)."""
