"""The checkout a framework's launch script lies in, for the paths it names on another layout.

The files a script reads (:func:`read_text`). The frameworks' scripts name files of their own
repository two ways the script's text does not resolve: from the folder they are started in
(verl's multi-turn examples, ``PROJECT_DIR="$(pwd)"`` under "make sure your current working
directory is the root of the project", examples/sglang_multiturn @b178a3cd) and at the path of
the framework's container (slime's ``source "/root/slime/scripts/models/qwen3-4B.sh"``,
examples/retool @624b824a, where the Docker image keeps the checkout). Read as data, such a path
is taken in the checkout that holds the script: the folder above the script in which the rest
of the path is there. A path whose rest is in no folder above the script keeps its error
(``--env`` gives the variable); a note names the folder taken.
"""

from __future__ import annotations

from pathlib import Path

MIN_TAIL_PARTS = 2
"""The fewest trailing path parts matched in the checkout (``models/qwen3-4B.sh``, not a bare
file name that any folder could hold)."""


def start_folder(script: Path, rest: str) -> Path | None:
    """The folder above ``script`` (itself included) holding ``rest`` (a path relative to the
    folder the script is started from), or None."""
    rest = rest.lstrip("/")
    if not rest:
        return None
    for folder in script.parents:
        if (folder / rest).exists():
            return folder
    return None


def container_path(missing: Path, script: Path) -> Path | None:
    """The file of the script's checkout that ``missing`` (an absolute path that is not there,
    outside the folders above the script) names: its longest tail of
    :data:`MIN_TAIL_PARTS` parts or more found in a folder above the script, the part of
    ``missing`` before that tail outside that folder (a path inside the checkout that is not
    there, a script's own mistake, is not moved). None where no folder holds one."""
    parts = missing.parts
    if not missing.is_absolute() or len(parts) <= MIN_TAIL_PARTS:
        return None
    for k in range(1, len(parts) - MIN_TAIL_PARTS + 1):
        tail = Path(*parts[k:])
        for folder in script.parents:
            if missing.is_relative_to(folder):
                continue
            if (folder / tail).is_file():
                return folder / tail
    return None


def read_text(path: Path, what: str, limit: int) -> str:
    """The text of the file a script reads (itself or one it sources), at most ``limit`` bytes;
    SpecError, one line, for a larger, unreadable or non-UTF-8 file."""
    from rlmcost.errors import SpecError

    try:
        size = path.stat().st_size
        if size > limit:
            raise SpecError(f"{what} {path} is {size:,} bytes; scripts over {limit:,} bytes are "
                            "not read")  # fmt: skip
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"cannot read {what} {path}: {exc.strerror}; check the path") from None
    except UnicodeDecodeError:
        raise SpecError(f"{what} {path} is not UTF-8 text; give a shell script") from None
