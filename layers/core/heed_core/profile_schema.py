"""How a profile's keys are declared and checked: one `key()` per setting, read by one builder.

A section is a frozen dataclass whose fields are declared with `key()`: the Python type says what
the value must be (bool, int, float, str, a Literal choice, `X | None`, `tuple[str, ...]`, a nested
section, `Mapping[str, X]`), `key()` adds bounds, a check and the default. `build()` turns a
mapping into the section, refusing an unknown key with a close spelling ("did you mean ...?"),
and returns next to it the plain mapping with every default filled in. What a key takes from
outside the schema (the source kinds' names, their purposes, their sections: heed_core.kinds)
comes in a `Tables` value handed to `build()`, never from a global.
"""
from __future__ import annotations

import collections.abc
import dataclasses
import difflib
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass
from functools import cache
from typing import Any, Literal, Union

from heed_core.errors import ConfigError


class ProfileError(ConfigError, ValueError):
    """A profile that cannot be used. The message names the key and the reason, on one line
    (a key or value that holds a line break is shown escaped)."""

    code = "bad_profile"


Check = Callable[[Any], "str | None"]  # None when the value is fine, else the reason

# A value still to write (`heed new-bot` leaves it where the operator must choose): a key declared
# `own` may hold "WRITE ME: what to write" in place of its value, read as its default until then.
MARK = "WRITE ME"


def unwritten_mark(value: Any) -> bool:
    """True for a value that is still the mark (``"WRITE ME: ..."``), in any letter case."""
    return isinstance(value, str) and value.lstrip().upper().startswith(MARK)


@dataclass(frozen=True)
class Key:
    """What `key()` records about a field, beyond its type and default."""

    ge: float | None = None
    gt: float | None = None
    what: str | None = None  # what the value must be, when the type alone says too little
    check: Check | None = None
    nonempty: bool = False  # a list that may not be empty
    keys: tuple[str, ...] | None = None  # Mapping fields: the only keys allowed
    null_is_default: bool = False  # an optional section given as `null` means "all defaults"
    own: bool = False  # the operator's own choice, stated on the page: a bot of its own never inherits it
    choices: str | None = None  # a str field: one of the names of this table (Tables.names)
    keys_of: str | None = None  # Mapping fields: the only keys allowed, "default" and the names of this table
    sections: str | None = None  # Mapping fields: name -> a section of this table (Tables.sections)
    doc: str = ""


@dataclass(frozen=True)
class Tables:
    """The names and sections some keys take from outside the schema, by table name: ``names``
    for `key(choices=...)` and `key(keys_of=...)`, ``sections`` (name -> section dataclass, in the
    order they are listed) for `key(sections=...)`."""

    names: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    sections: Mapping[str, Mapping[str, type]] = dataclasses.field(default_factory=dict)


NO_TABLES = Tables()


def key(default: Any = MISSING, *, factory: Callable[[], Any] | None = None, **meta: Any) -> Any:
    """Declare a field of a section; without a default (or factory) the key is required."""
    metadata = {"heed": Key(**meta)}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    if default is MISSING:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def unknown(where: str, name: str, known: list[str], noun: str = "key") -> ProfileError:
    """One line for a key nobody reads, with the closest known spelling if there is one."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else f"known: {', '.join(known)}"
    return ProfileError(f"{where}: unknown {noun} ({hint})")


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _meta(f: dataclasses.Field[Any]) -> Key:
    return f.metadata.get("heed") or Key()


def _join(parts: list[str], conj: str = "or") -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} {conj} {parts[-1]}"


def _optional(tp: Any) -> tuple[bool, Any]:
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return True, args[0]
    return False, tp


def describe(tp: Any, meta: Key, name: str = "", tables: Tables | None = None) -> str:
    """What a value of this field must be, in the words of the error message."""
    if meta.what:
        return meta.what
    nullable, inner = _optional(tp)
    if nullable:
        return "null or " + describe(inner, meta, name, tables)
    if meta.choices is not None:
        names = list((tables or NO_TABLES).names.get(meta.choices, ()))
        return _join(names) if names else f"one of the {meta.choices.replace('_', ' ')}"
    bound = f" >= {meta.ge:g}" if meta.ge is not None else f" > {meta.gt:g}" if meta.gt is not None else ""
    if inner is Any:
        return "anything"
    if inner is bool:
        return "true or false"
    if inner is int:
        return f"an integer{bound}"
    if inner is float:
        return f"a number of seconds{bound}" if name.endswith("_s") else f"a number{bound}"
    if inner is str:
        return "a non-empty string"
    if typing.get_origin(inner) is Literal:
        return _join([str(a) for a in typing.get_args(inner)])
    if typing.get_origin(inner) is tuple:
        (item,) = typing.get_args(inner)[:1]
        if dataclasses.is_dataclass(item):
            return f"a list of {{{', '.join(f.name for f in dataclasses.fields(item))}}}"
        return "a list of strings"
    return "a mapping of keys"


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _bounded(v: float, meta: Key) -> bool:
    return (meta.ge is None or v >= meta.ge) and (meta.gt is None or v > meta.gt)


def _convert(tp: Any, value: Any, where: str, meta: Key, name: str, tables: Tables) -> tuple[Any, Any]:
    """(typed value, plain value) of one given key, or a ProfileError naming it."""
    nullable, inner = _optional(tp)

    def bad(reason: str | None = None) -> ProfileError:
        return ProfileError(f"{where}: {value!r} is not valid (must be {reason or describe(tp, meta, name)})")

    if value is None:
        if nullable:
            return None, None
        raise bad()
    if dataclasses.is_dataclass(inner):
        if not isinstance(value, Mapping):
            raise bad("a mapping of options" if meta.null_is_default else None)
        return build(inner, value, where, tables)  # type: ignore[arg-type]
    if meta.sections is not None:
        return _convert_sections(tables.sections.get(meta.sections, {}), value, where, tables)
    if meta.choices is not None:
        return _choice(tables.names.get(meta.choices, ()), value, where), value
    if inner is Any:  # read by a room above the core, which checks it (the info page's sentences)
        return value, value
    if inner is bool:
        ok, typed = isinstance(value, bool), value
    elif inner is int:
        ok, typed = isinstance(value, int) and not isinstance(value, bool) and _bounded(value, meta), value
    elif inner is float:
        ok, typed = _number(value) and _bounded(float(value), meta), float(value) if _number(value) else value
    elif inner is str:
        ok, typed = isinstance(value, str) and bool(value.strip()), value
    elif typing.get_origin(inner) is Literal:
        ok, typed = True, _choice(typing.get_args(inner), value, where)
    elif typing.get_origin(inner) is tuple:
        return _convert_list(typing.get_args(inner)[0], value, where, meta, bad, tables)
    elif typing.get_origin(inner) in (collections.abc.Mapping, dict):
        return _convert_mapping(typing.get_args(inner)[1], value, where, meta, tables)
    else:  # pragma: no cover - a section declared with a type this builder does not know
        raise TypeError(f"{where}: unsupported field type {inner!r}")
    if not ok:
        raise bad()
    if meta.check is not None:
        reason = meta.check(typed)
        if reason:
            raise ProfileError(f"{where}: {reason}")
    return typed, value


def _choice(options: tuple[Any, ...], value: Any, where: str) -> Any:
    if value not in options:
        names = [str(a) for a in options]
        close = difflib.get_close_matches(str(value), names, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise ProfileError(f"{where}: {value!r} is not valid (must be {_join(names)}{hint})")
    return value


def _convert_list(item: Any, value: Any, where: str, meta: Key, bad: Callable[..., ProfileError],
                  tables: Tables) -> tuple[Any, Any]:
    if not isinstance(value, (list, tuple)):
        raise bad()
    if meta.nonempty and not value:
        raise ProfileError(f"{where}: empty (must be {describe(tuple[item, ...], meta)} with at least one entry)")
    typed: list[Any] = []
    plain: list[Any] = []
    for i, v in enumerate(value):
        at = f"{where}[{i}]"
        t: Any
        p: Any
        if dataclasses.is_dataclass(item):
            if not isinstance(v, Mapping):
                raise ProfileError(f"{at}: {v!r} is not valid (must be a mapping of keys)")
            t, p = build(item, v, at, tables)  # type: ignore[arg-type]
        else:
            if not (isinstance(v, str) and v.strip()):
                raise ProfileError(f"{at}: {v!r} is not valid (must be a non-empty string)")
            t, p = v, v
            if meta.check is not None:
                reason = meta.check(v)
                if reason:
                    raise ProfileError(f"{at}: {reason}")
        typed.append(t)
        plain.append(p)
    return tuple(typed), plain


def _convert_mapping(item: Any, value: Any, where: str, meta: Key, tables: Tables) -> tuple[Any, Any]:
    if not isinstance(value, Mapping):
        raise ProfileError(f"{where}: {value!r} is not valid (must be a mapping of keys)")
    allowed = meta.keys
    if meta.keys_of is not None:
        allowed = ("default", *tables.names.get(meta.keys_of, ()))
    typed: dict[str, Any] = {}
    plain: dict[str, Any] = {}
    for k, v in value.items():
        at = f"{where}.{k}"
        if allowed is not None and k not in allowed:
            raise unknown(at, str(k), list(allowed))
        t, p = _convert(item, v, at, Key(ge=meta.ge, gt=meta.gt), str(k), tables)
        typed[str(k)] = t
        plain[str(k)] = p
    return types.MappingProxyType(typed), plain


def _convert_sections(known: Mapping[str, type], value: Any, where: str, tables: Tables) -> tuple[Any, Any]:
    """A mapping of named sections (``tasks``: a kind's name -> its options): each name one of
    ``known``, each value that section (``null``: all its defaults), in ``known``'s order."""
    if not isinstance(value, Mapping):
        raise ProfileError(f"{where}: {value!r} is not valid (must be a mapping of keys)")
    for k in value:
        if k not in known:
            raise unknown(f"{where}.{k}", str(k), list(known), "task kind")
    typed: dict[str, Any] = {}
    plain: dict[str, Any] = {}
    for name, cls in known.items():
        if name not in value:
            continue
        given = value[name] if value[name] is not None else {}
        at = f"{where}.{name}"
        if not isinstance(given, Mapping):
            raise ProfileError(f"{at}: {given!r} is not valid (must be a mapping of options)")
        typed[name], plain[name] = build(cls, given, at, tables)
    return types.MappingProxyType(typed), plain


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        hints = _hints(type(value))
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not (getattr(value, f.name) is None and dataclasses.is_dataclass(_optional(hints[f.name])[1]))}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def build(cls: type, raw: Mapping[str, Any], where: str = "", tables: Tables = NO_TABLES) -> tuple[Any, dict[str, Any]]:
    """The section `cls` from `raw`, and `raw` with every default filled in (plain values).

    Optional sections and mappings that are absent stay absent in the plain mapping (code that
    reads it with `.get(name) or {}` sees none), every other absent key gets its default."""
    names = [f.name for f in dataclasses.fields(cls)]
    noun = getattr(cls, "_unknown_noun", "key")
    for k in raw:
        if k not in names:
            raise unknown(f"{where}.{k}" if where else str(k), str(k), names, noun)
    hints = _hints(cls)
    values: dict[str, Any] = {}
    plain: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        at = f"{where}.{f.name}" if where else f.name
        meta = _meta(f)
        tp = hints[f.name]
        nullable, inner = _optional(tp)
        if f.name in raw and meta.own and unwritten_mark(raw[f.name]):
            # Still to write: the default until then, the mark kept where `heed profile check` finds it.
            values[f.name] = f.default_factory() if f.default_factory is not MISSING else f.default
            plain[f.name] = raw[f.name]
        elif f.name in raw:
            given = raw[f.name]
            if given is None and meta.null_is_default and dataclasses.is_dataclass(inner):
                given = {}
            typed, p = _convert(tp, given, at, meta, f.name, tables)
            if isinstance(typed, Mapping) and f.default_factory is not MISSING:
                # Mapping keys merge over their defaults (fetch.max_bytes.feed alone keeps default).
                base = f.default_factory()
                if isinstance(base, Mapping):
                    typed = types.MappingProxyType({**base, **typed})
                    p = {**_plain(base), **p}
            values[f.name], plain[f.name] = typed, p
        elif f.default is not MISSING:
            # 86400 declared for a float field is 86400.0 typed and 86400 in the mapping.
            values[f.name] = float(f.default) if inner is float and _number(f.default) else f.default
            if not (f.default is None and (dataclasses.is_dataclass(inner) or typing.get_origin(inner) in (
                    collections.abc.Mapping, dict))):
                plain[f.name] = _plain(f.default)
        elif f.default_factory is not MISSING:
            values[f.name] = f.default_factory()
            plain[f.name] = _plain(values[f.name])
        elif dataclasses.is_dataclass(inner):
            # A required section that is absent: name the first key it misses.
            values[f.name], plain[f.name] = build(inner, {}, at, tables)  # type: ignore[arg-type]
        else:
            raise ProfileError(f"{at}: missing (must be {describe(tp, meta, f.name, tables)})")
    return cls(**values), plain


def fields_of(cls: type) -> list[tuple[str, Any, Key, Any]]:
    """(name, type, Key, default) of each field: for generated key references."""
    hints = _hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not MISSING else (
            f.default_factory() if f.default_factory is not MISSING else MISSING)
        out.append((f.name, hints[f.name], _meta(f), default))
    return out
