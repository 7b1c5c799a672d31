"""Registries: the extension points (agents, task generators, document parsers, trajectory importers,
export formats, executors), each filled by a decorator and by other packages' entry points.

Modelled on inspect-ai's registry: ``@registry.register("name")`` records a factory (or
a plain function) under a name with the first line of its docstring, and
:meth:`Registry.create` builds an object from a name and arguments, checks the
arguments against the factory's signature (converting CLI strings to the annotated
types), and tags the object with a :class:`RegistrySpec` (kind, name, arguments,
origin) that a run log stores and :meth:`Registry.create` can rebuild from.

Entries come from three places, loaded on the first lookup of a registry:

- Taskloom's own modules (``modules``: dotted names; a package means all its modules);
- any module imported before, whose decorators ran (e.g. a test's own agent);
- other distributions' entry points in the group ``taskloom.<kind>s`` (``taskloom.agents``,
  ``taskloom.generators``, ``taskloom.parsers``, ``taskloom.importers``, ``taskloom.exporters``,
  ``taskloom.executors``). An entry point names a module whose decorators register entries, or
  a callable registered under the entry point's name. A plugin that fails to load is skipped with
  a :class:`PluginWarning`; it never stops Taskloom.

Examples
--------
>>> shapes: Registry[str] = Registry("shape", modules=())
>>> @shapes.register("square")
... def square(side: int = 1, name: str = "sq") -> str:
...     '''A square of a given side.'''
...     return f"{name}:{side * side}"
>>> made = shapes.create("square", {"side": "3"}, context={"name": "s"})
>>> made
's:9'
>>> shapes.names(), shapes.get("square").summary
(['square'], 'A square of a given side.')
>>> shapes.spec("square", {"side": "3"}).args
{'side': 3}
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .errors import InputError

__all__ = ["Registry", "RegistryEntry", "RegistrySpec", "RegistryError", "PluginWarning", "RegistryKind", "registry_spec", "SPEC_ATTR"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
RegistryKind = Literal["agent", "generator", "parser", "importer", "exporter", "executor"]
#: Attribute under which :meth:`Registry.create` records an object's spec.
SPEC_ATTR = "__taskloom_registry_spec__"
BUILTIN = "builtin"


class RegistryError(InputError):
    """An unknown registry name, an argument a factory does not take, or a clashing registration."""


class PluginWarning(UserWarning):
    """An entry-point plugin could not be loaded or registered; it is skipped."""


class RegistrySpec(BaseModel):
    """An object as a run log records it: which registry entry built it, with which arguments."""

    kind: str = Field(description="The registry: agent, generator, parser, importer, exporter or executor.")
    name: str = Field(description="The entry's registered name.")
    args: dict[str, Any] = Field(default_factory=dict, description="Arguments given by the user (not the context the caller supplies).")
    origin: str = Field(BUILTIN, description="'builtin', the distribution that provided the entry, or the module that registered it.")


class RegistryEntry(BaseModel):
    """One registered factory or function."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    kind: str
    name: str
    factory: Callable[..., Any]
    summary: str = Field("", description="First line of the factory's docstring.")
    origin: str = BUILTIN
    meta: dict[str, Any] = Field(default_factory=dict, description="Kind-specific details (a parser's suffixes, a generator's graph kind, …).")

    def parameters(self) -> dict[str, inspect.Parameter]:
        """The factory's keyword-usable parameters, by name."""
        return {
            p.name: p
            for p in _signature(self.factory).parameters.values()
            if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        }

    def accepts(self, name: str) -> bool:
        """Whether the factory takes a keyword argument ``name`` (explicitly or through ``**kwargs``)."""
        params = _signature(self.factory).parameters.values()
        return name in self.parameters() or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _signature(fn: Callable[..., Any]) -> inspect.Signature:
    try:
        return inspect.signature(fn, eval_str=True)
    except (NameError, TypeError):  # an annotation only importable under TYPE_CHECKING: no conversion then
        return inspect.signature(fn)


def _summary(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.strip().splitlines()[0].strip() if doc.strip() else ""


def _origin(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", "") or ""
    return BUILTIN if module == "taskloom" or module.startswith("taskloom.") else module or "unknown"


def _dist(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else f"entry point {ep.value}"


def registry_spec(obj: Any) -> RegistrySpec | None:
    """The spec :meth:`Registry.create` recorded on ``obj``, or None for objects it did not build."""
    spec = getattr(obj, SPEC_ATTR, None)
    return spec if isinstance(spec, RegistrySpec) else None


class Registry(Generic[T]):
    """Named factories of one kind.

    Parameters
    ----------
    kind
        The kind (``agent``, ``generator``, …); the entry-point group is ``taskloom.<kind>s``.
    modules
        Taskloom modules (or packages, meaning all their modules) whose decorators fill
        the registry; imported on the first lookup.
    label
        How errors name an entry (default: the kind), e.g. ``"agent kind"``.
    context
        Parameter names the caller supplies (e.g. ``name``, ``settings``): passed to the
        factories that take them, refused as user arguments, left out of specs.
    """

    def __init__(self, kind: str, modules: Iterable[str] = (), label: str | None = None, context: Iterable[str] = ()) -> None:
        self.kind = kind
        self.group = f"taskloom.{kind}s"
        self.label = label or kind
        self.modules = tuple(modules)
        self.context = frozenset(context)
        self._entries: dict[str, RegistryEntry] = {}
        self._loaded = False
        self._loading = False
        self._origin: str | None = None  # the distribution whose entry point is being loaded
        self._lock = threading.RLock()

    # -- registering -----------------------------------------------------------------

    def register(self, name: str | None = None, *, summary: str | None = None, **meta: Any) -> Callable[[F], F]:
        """Decorator: register the function or class under ``name`` (default: its ``__name__``).

        ``meta`` holds kind-specific details (e.g. ``suffixes=(".md",)`` for a parser).
        """

        def decorate(factory: F) -> F:
            self.add(name or factory.__name__, factory, summary=summary, **meta)
            return factory

        return decorate

    def add(self, name: str, factory: Callable[..., Any], *, summary: str | None = None, **meta: Any) -> RegistryEntry:
        """Register ``factory`` under ``name`` (what :meth:`register` does)."""
        if not name or not isinstance(name, str):
            raise RegistryError(f"a {self.kind} needs a non-empty name; pass one to register(...)")
        entry = RegistryEntry(
            kind=self.kind, name=name, factory=factory, summary=summary if summary is not None else _summary(factory),
            origin=self._origin or _origin(factory), meta=meta,
        )
        with self._lock:
            old = self._entries.get(name)
            if old is not None and not _same(old.factory, factory):
                where = f"{getattr(old.factory, '__module__', '?')}.{getattr(old.factory, '__qualname__', '?')}"
                raise RegistryError(f"{self.label} {name!r} is already registered (by {where}, {old.origin}); register yours under another name")
            self._entries[name] = entry
        return entry

    # -- loading -----------------------------------------------------------------------

    def _ensure(self) -> None:
        if self._loaded:
            return
        with self._lock:  # other threads wait here until loading is done; the loading thread re-enters (RLock)
            if self._loaded or self._loading:
                return
            self._loading = True
            try:
                for module in self.modules:
                    _import_all(module)
                for ep in entry_points(group=self.group):
                    self._load_plugin(ep)
                self._loaded = True
            finally:
                self._loading = False

    def _load_plugin(self, ep: EntryPoint) -> None:
        dist = _dist(ep)
        try:
            with self._from(dist):
                target = ep.load()
                if not isinstance(target, ModuleType) and callable(target) and ep.name not in self._entries:
                    self.add(ep.name, target)
        except Exception as exc:  # a broken plugin is skipped with a warning; Taskloom keeps working
            warnings.warn(
                f"taskloom: the {self.kind} plugin {ep.name!r} ({ep.value}) from {dist} could not be loaded and is skipped: "
                f"{type(exc).__name__}: {exc}",
                PluginWarning,
                stacklevel=2,
            )

    @contextmanager
    def _from(self, origin: str) -> Iterator[None]:
        previous, self._origin = self._origin, origin
        try:
            yield
        finally:
            self._origin = previous

    # -- looking up --------------------------------------------------------------------

    def names(self) -> list[str]:
        """Registered names, sorted."""
        self._ensure()
        return sorted(self._entries)

    def entries(self) -> list[RegistryEntry]:
        """Registered entries in registration order (Taskloom's own first, then plugins)."""
        self._ensure()
        return list(self._entries.values())

    def __contains__(self, name: object) -> bool:
        self._ensure()
        return name in self._entries

    def get(self, name: str) -> RegistryEntry:
        """The entry registered as ``name``; an unknown name is refused with the registered ones."""
        self._ensure()
        entry = self._entries.get(name)
        if entry is None:
            known = ", ".join(sorted(self._entries)) or "none"
            raise RegistryError(f"unknown {self.label} {name!r}; registered: {known}")
        return entry

    def spec(self, name: str, args: Mapping[str, Any] | None = None) -> RegistrySpec:
        """``name`` with ``args`` checked against its factory and converted to the annotated types."""
        entry = self.get(name)
        return RegistrySpec(kind=self.kind, name=name, args=self._check(entry, dict(args or {})), origin=entry.origin)

    def create(self, name: str, args: Mapping[str, Any] | None = None, *, context: Mapping[str, Any] | None = None) -> T:
        """Build the object registered as ``name`` from user ``args`` and caller ``context``; tag it with its spec.

        Context values are passed only to factories that take them. Objects that take
        no attributes are returned untagged (:func:`registry_spec` is then None).
        """
        spec = self.spec(name, args)
        entry = self.get(name)
        extra = {k: v for k, v in (context or {}).items() if entry.accepts(k)}
        missing = [p.name for p in entry.parameters().values() if p.default is inspect.Parameter.empty and p.name not in spec.args and p.name not in extra]
        if missing:
            raise RegistryError(f"{self.kind} {name} needs {', '.join(f'{m}=…' for m in missing)}")
        obj: T = entry.factory(**extra, **spec.args)
        try:
            setattr(obj, SPEC_ATTR, spec)
        except (AttributeError, TypeError):  # e.g. a class with __slots__: it simply carries no spec
            return obj
        return obj

    def _check(self, entry: RegistryEntry, args: dict[str, Any]) -> dict[str, Any]:
        params = entry.parameters()
        open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in _signature(entry.factory).parameters.values())
        takes = sorted(n for n in params if n not in self.context)
        extra = sorted(k for k in args if k in self.context or (k not in params and not open_ended))
        if extra:
            raise RegistryError(f"{self.kind} {entry.name} does not take {', '.join(extra)}; it takes {', '.join(takes) or 'no options'}")
        checked: dict[str, Any] = {}
        for key, value in args.items():
            param = params.get(key)
            if param is None or param.annotation is inspect.Parameter.empty or isinstance(param.annotation, str):
                checked[key] = value
                continue
            try:
                checked[key] = TypeAdapter(param.annotation).validate_python(value)
            except ValidationError as exc:
                why = exc.errors()[0]["msg"] if exc.errors() else str(exc)
                raise RegistryError(f"{self.kind} {entry.name}: {key}={value!r} is not valid ({why})") from None
        return checked


def _same(a: Callable[..., Any], b: Callable[..., Any]) -> bool:
    """The same factory, also when its module was imported twice (e.g. reloaded)."""
    return a is b or (getattr(a, "__module__", None), getattr(a, "__qualname__", None)) == (getattr(b, "__module__", None), getattr(b, "__qualname__", None))


def _import_all(name: str) -> None:
    """Import a module, or a package and every module in it (their decorators register entries)."""
    module = importlib.import_module(name)
    path = getattr(module, "__path__", None)
    if path is not None:
        for info in pkgutil.iter_modules(path, prefix=f"{name}."):
            importlib.import_module(info.name)
