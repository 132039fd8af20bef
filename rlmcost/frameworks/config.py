"""Reading a framework's config as data: safe YAML/JSON, dotted keys, typed values.

A config is parsed with ``json.loads`` or ``yaml.safe_load`` only (no tags, no objects, no
code), flattened to dotted keys (``actor_rollout_ref.rollout.n``), overridden by
``key=value`` arguments in Hydra's syntax (verl, NeMo RL: ``a.b=3``, ``+a.b=3``,
``++a.b=3``, ``~a.b``), and read through a :class:`Reader` that checks each value's type and
range, resolves the OmegaConf references the frameworks' configs use (``${a.b}``,
``${mul:x,y}``, ``${div:x,y}``, ``${oc.select:a.b,default}``: verl's generated configs, NeMo
RL's recipes) and records which keys were read, so that the rest can be listed as ignored.
Every problem is a one-line :class:`~rlmcost.errors.SpecError`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlmcost.errors import SpecError

MAX_CONFIG_BYTES = 1 << 20
"""Largest config file read (1 MiB; the frameworks' example configs are a few KiB)."""

MAX_KEYS = 20_000
"""Most dotted keys in a config (YAML aliases can make a small file expand)."""

MAX_DEPTH = 32
"""Deepest nesting followed (a self-referencing YAML alias would never end)."""

MAX_COUNT = 1 << 40
"""Largest batch size, GPU count or length accepted (beyond this a value is a typo)."""

_REF = re.compile(r"\$\{([^{}]*)\}")
_NUMBER = re.compile(r"-?\d+(\.\d*)?([eE][-+]?\d+)?")


def load_mapping(path: str | Path, what: str) -> dict[str, Any]:
    """The mapping in a JSON or YAML file, by safe loading only; SpecError otherwise."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise SpecError(
                f"{what} {p} is {size:,} bytes; configs over {MAX_CONFIG_BYTES:,} bytes are "
                "not read (give the framework's config file)"
            )
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"cannot read {what} {p}: {exc.strerror}; check the path") from None
    except UnicodeDecodeError:
        raise SpecError(f"{what} {p} is not UTF-8 text; give a YAML or JSON file") from None
    return parse_mapping(text, f"{what} {p.name}")


def parse_mapping(text: str, where: str) -> dict[str, Any]:
    """JSON, else safe YAML; the top level must be a mapping."""
    try:
        data = json.loads(text)
    except ValueError:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            first = " ".join(str(exc).split())[:160]
            raise SpecError(f"{where} is not safe YAML or JSON ({first})") from None
        except RecursionError:
            raise SpecError(f"{where} nests too deeply to be a config") from None
    if not isinstance(data, dict):
        raise SpecError(f"{where} must hold a mapping of keys, got {type(data).__name__}")
    return data


def flatten(data: dict[str, Any], where: str) -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; lists stay values. SpecError past the limits."""
    out: dict[str, Any] = {}

    def walk(node: dict[Any, Any], prefix: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise SpecError(f"{where} nests deeper than {MAX_DEPTH} levels at '{prefix}'")
        for key, value in node.items():
            if not isinstance(key, str | int | float | bool) or key is None:
                raise SpecError(f"{where}: key {key!r} under '{prefix}' is not a name")
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, dict):
                walk(value, name, depth + 1)
            else:
                out[name] = value
            if len(out) > MAX_KEYS:
                raise SpecError(f"{where} has more than {MAX_KEYS:,} keys; not a config")

    walk(data, "", 0)
    return out


def apply_overrides(flat: dict[str, Any], overrides: list[str], where: str) -> dict[str, Any]:
    """Hydra-style ``key=value`` overrides (``+``/``++`` prefixes add, ``~key`` deletes); the
    value is read as a YAML scalar, flow list (``[a, b]``) or flow mapping, safely. As Hydra
    applies them (``OmegaConf.update(cfg, key, value, merge=True)``,
    ``hydra/_internal/config_loader_impl.py`` 1.3): a mapping is merged into the mapping at
    ``key`` (its other keys kept), a value replaces whatever is there (a mapping whole)."""
    import yaml

    if isinstance(overrides, str):  # one string had been read character by character
        raise SpecError(f"{where}: give the overrides as a list of KEY=VALUE strings")
    out = dict(flat)
    for item in overrides:
        text = item.strip()
        if text.startswith("~"):
            key = text[1:].split("=", 1)[0].strip()
            for k in [k for k in out if k == key or k.startswith(key + ".")]:
                del out[k]
            continue
        key, sep, raw = text.partition("=")
        key = key.lstrip("+").strip()
        if not sep or not key or not re.fullmatch(r"[A-Za-z0-9_.\-]+", key):
            raise SpecError(
                f"{where}: override {item!r} is not KEY=VALUE (e.g. actor_rollout_ref.rollout.n=5)"
            )
        try:
            value = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError:
            value = raw  # Hydra reads unquoted text as a string
        for end in [i for i, ch in enumerate(key) if ch == "."]:  # OmegaConf.update: a value
            out.pop(key[:end], None)  # on the way to the key is replaced by a mapping
        if isinstance(value, dict):  # merged into the mapping there (Hydra's merge=True)
            for sub, v in flatten(value, where).items():
                name = f"{key}.{sub}"
                for end in [i for i, ch in enumerate(name) if ch == "."]:
                    out.pop(name[:end], None)  # a value on the way replaced by a mapping
                out[name] = v
            out.pop(key, None)
        else:  # a value replaces the mapping there, if any
            for k in [k for k in out if k.startswith(key + ".")]:
                del out[k]
            out[key] = value
    return out


def _scalar(text: str) -> Any:
    """A resolver argument as OmegaConf's grammar reads it: ``null``, booleans, numbers and
    lists (``[]``: verl's ``${oc.select:...profiler.ranks,[]}``) as YAML reads them, anything
    else as its text (quotes stripped)."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text.strip()
    return value if value is None or isinstance(value, (bool, int, float, str, list)) \
        else text.strip()  # fmt: skip


@dataclass
class Reader:
    """Typed, recorded access to a flattened config (``where`` names it in errors)."""

    flat: dict[str, Any]
    where: str
    read: set[str] = field(default_factory=set)

    def has(self, key: str) -> bool:
        return key in self.flat

    def raw(self, key: str, default: Any = None) -> Any:
        """The value (references resolved), or ``default`` when absent; marks it read."""
        self.read.add(key)
        if key not in self.flat:
            return default
        return self._resolve(key, self.flat[key], 0)

    def _resolve(self, key: str, value: Any, depth: int) -> Any:
        if not isinstance(value, str) or "${" not in value:
            return value
        if depth > 8:
            raise SpecError(f"{self.where}: '{key}' refers to itself through ${{...}}")
        text = value.strip()
        for _ in range(64):  # innermost references first: ${mul:${a}, ${b}}
            m = _REF.search(text)
            if m is None:
                return text
            resolved = self._reference(key, m.group(1), depth)
            if m.span() == (0, len(text)):
                return self._resolve(key, resolved, depth + 1)
            inside = text.rfind("${", 0, m.start()) > text.rfind("}", 0, m.start())  # an argument
            shown = "null" if inside and resolved is None else str(resolved)  # None, not 'None'
            text = text[: m.start()] + shown + text[m.end() :]
        raise SpecError(f"{self.where}: '{key}' has too many ${{...}} references")

    def _reference(self, key: str, expr: str, depth: int) -> Any:
        expr = expr.strip()
        if expr.startswith("mul:"):
            product = 1
            for part in expr[4:].split(","):
                v = self._resolve(key, part.strip(), depth + 1)
                if isinstance(v, str) and v.lstrip("-").isdigit():
                    v = int(v)
                if not isinstance(v, int) or isinstance(v, bool):
                    raise SpecError(f"{self.where}: '{key}' multiplies {part.strip()!r}, not a "
                                    "whole number")  # fmt: skip
                product *= v
            return product
        if expr.startswith("div:"):  # NeMo RL's resolver (nemo_rl/utils/config.py: a / b)
            parts = [self._resolve(key, p.strip(), depth + 1) for p in expr[4:].split(",")]
            nums = [float(v) if isinstance(v, str) and _NUMBER.fullmatch(v.strip()) else v
                    for v in parts]  # fmt: skip
            if len(nums) != 2 or not all(isinstance(v, int | float) and not isinstance(v, bool)
                                         for v in nums) or not nums[1]:  # fmt: skip
                raise SpecError(f"{self.where}: '{key}' divides {expr[4:]!r}; give two numbers, "
                                "the second not 0")  # fmt: skip
            return nums[0] / nums[1]
        if expr.startswith("oc.select:"):  # OmegaConf's: the key's value, else the default
            target, comma, fallback = expr[len("oc.select:"):].partition(",")
            target = self._target(key, target.strip(), expr)
            if target in self.flat and self.flat[target] != "???":  # ??? selects the default
                return self._resolve(target, self.flat[target], depth + 1)
            return _scalar(fallback) if comma else None
        if ":" in expr:
            raise SpecError(
                f"{self.where}: '{key}' uses the resolver ${{{expr}}}; only ${{a.b}} references, "
                "${mul:...}, ${div:...} and ${oc.select:...} are read (set the key to a number)"
            )
        target = self._target(key, expr, expr)
        if target not in self.flat:
            raise SpecError(f"{self.where}: '{key}' refers to ${{{expr}}}, which is not set")
        return self._resolve(target, self.flat[target], depth + 1)

    def _target(self, key: str, ref: str, expr: str) -> str:
        """The dotted key that ``ref``, in ``key``'s value, names, as OmegaConf reads it: from
        the root, or with leading dots from ``key``'s parent (``.x`` a sibling, ``..x`` a
        sibling of the parent); SpecError for a mapping, which rlmcost reads as keys, not as a
        value."""
        dots = len(ref) - len(ref.lstrip("."))
        parent = key.split(".")[:-1]
        if dots - 1 > len(parent):
            raise SpecError(f"{self.where}: '{key}' refers to ${{{expr}}}, above the config's "
                            "top level")  # fmt: skip
        target = ".".join([*parent[: len(parent) - max(dots - 1, 0)], ref[dots:]] if dots
                          else [ref])  # fmt: skip
        if target not in self.flat and any(k.startswith(target + ".") for k in self.flat):
            raise SpecError(f"{self.where}: '{key}' refers through ${{{expr}}} to the mapping "
                            f"'{target}'; rlmcost reads a value here (set the key to one)")
        return target

    def integer(self, key: str, default: int | None, lo: int = 1, hi: int = MAX_COUNT) -> Any:
        """A whole number in [lo, hi] (None stays None when the default allows it; a key set
        to null or left empty where the framework reads a number is an error)."""
        v = self.raw(key, default)
        if v is None:
            return self._unset(key, default, "a whole number")
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, str) and re.fullmatch(r"-?\d+", v.strip()):
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise SpecError(f"{self.where}: '{key}' must be a whole number, got {v!r}")
        if not lo <= v <= hi:
            raise SpecError(f"{self.where}: '{key}'={v} is out of range; give {lo}..{hi:,}")
        return v

    def fraction(self, key: str, default: float | None) -> Any:
        """A number in (0, 1] (None as :meth:`integer` takes it)."""
        v = self.raw(key, default)
        if v is None:
            return self._unset(key, default, "a fraction in (0, 1]")
        if isinstance(v, str):
            try:
                v = float(v)
            except ValueError:
                pass
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 < v <= 1:
            raise SpecError(f"{self.where}: '{key}' must be a fraction in (0, 1], got {v!r}")
        return float(v)

    def _unset(self, key: str, default: Any, what: str) -> None:
        """None for a key whose default is None (unset); else a SpecError: the key is set to
        null or left empty (``key=``) where the framework reads a value of its own."""
        if default is None:
            return None
        raise SpecError(f"{self.where}: '{key}' must be {what}, got null (or nothing after "
                        f"'='); give one, or drop the key for its default {default!r}")  # fmt: skip

    def number(self, key: str, default: float) -> float:
        """A finite number >= 0 (coefficients)."""
        v = self.raw(key, default)
        if isinstance(v, str):
            try:
                v = float(v)
            except ValueError:
                pass
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < 1e30:
            raise SpecError(f"{self.where}: '{key}' must be a number >= 0, got {v!r}")
        return float(v)

    def flag(self, key: str, default: bool) -> bool:
        """A boolean (YAML true/false; the strings true/false/1/0 from a command line)."""
        v = self.raw(key, default)
        if isinstance(v, str) and v.strip().lower() in ("true", "false", "1", "0"):
            v = v.strip().lower() in ("true", "1")
        if not isinstance(v, bool):
            raise SpecError(f"{self.where}: '{key}' must be true or false, got {v!r}")
        return v

    def text(self, key: str, default: str | None, choices: tuple[str, ...] = ()) -> Any:
        """A string (one of ``choices`` when given)."""
        v = self.raw(key, default)
        if v is None:
            return None
        if not isinstance(v, str) or len(v) > 4096:
            raise SpecError(f"{self.where}: '{key}' must be a string, got {v!r:.80}")
        if choices and v not in choices:
            raise SpecError(f"{self.where}: '{key}'={v!r} is not one of {', '.join(choices)}")
        return v

    def words(self, key: str, default: Any) -> Any:
        """A list of strings (a YAML list, or one comma-separated string)."""
        v = self.raw(key, default)
        if v is None:
            return None
        if isinstance(v, str):
            return [w.strip() for w in v.split(",") if w.strip()]
        if not isinstance(v, list) or not all(isinstance(w, str) for w in v):
            raise SpecError(f"{self.where}: '{key}' must be a list of names, got {v!r:.80}")
        return v

    def unread(self, ignore: tuple[str, ...] = ()) -> list[str]:
        """Keys not read, except those under the ``ignore`` prefixes (cost-free keys)."""
        return sorted(
            k for k in self.flat
            if k not in self.read and not any(k == p or k.startswith(p + ".") for p in ignore)
        )  # fmt: skip

    def near_misses(self, ignore: tuple[str, ...] = ()) -> dict[str, str]:
        """Each unread key that is a near spelling of a key the importer asked for (difflib
        ratio >= 0.9: ``data.max_response_lenght`` -> ``data.max_response_length``), for the
        warning that lists the ignored keys: a typo, not a key rlmcost has no use for."""
        from difflib import get_close_matches

        asked = sorted(self.read)
        near = {k: get_close_matches(k, asked, n=1, cutoff=0.9) for k in self.unread(ignore)}
        return {k: close[0] for k, close in near.items() if close}
