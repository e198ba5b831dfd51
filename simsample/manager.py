"""The plugin host: loads built-in plugins and ``simsample`` entry points, lazily, once.

Each hook implementation is called on its own, so that one broken plugin is recorded with its
error (and shown by ``simsample plugins``) while the others keep working. Set
``SIMSAMPLE_DISABLE_PLUGINS=a,b`` to skip plugins by name.
"""

from __future__ import annotations

import importlib
import os
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any

import pluggy

from simsample import hookspecs
from simsample._version import __version__
from simsample.errors import UserError

if TYPE_CHECKING:
    import click

    from simsample.plugin_base import Adapter, Reader, Sampler
    from simsample.workload import Workload


def builtin_plugins() -> tuple[str, ...]:
    """Every public module of :mod:`simsample.plugins`' folders (``readers``, ``samplers``,
    ``commands``; names starting with ``_`` are helpers).

    Sorted by module name, which is also the order in which readers are asked to detect a
    format; detectors look at content, so the order only matters for ambiguous files.
    """
    import importlib
    import pkgutil

    # by name, as entry points are loaded: the host knows no plugin module in advance
    plugins = importlib.import_module("simsample.plugins")
    found = []
    for folder in sorted(m.name for m in pkgutil.iter_modules(plugins.__path__) if m.ispkg):
        pkg = importlib.import_module(f"{plugins.__name__}.{folder}")
        found += [
            (m.name, f"{pkg.__name__}.{m.name}")
            for m in pkgutil.iter_modules(pkg.__path__)
            if not m.name.startswith("_")
        ]
    return tuple(path for _, path in sorted(found))


_KINDS = ("samplers", "readers", "adapters")


@dataclass
class PluginInfo:
    """What one plugin is, where it comes from, what it registered, and how it failed."""

    name: str
    origin: str  # "builtin", "entrypoint" or "object"
    distribution: str | None = None
    version: str | None = None
    registers: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "origin": self.origin,
            "distribution": self.distribution,
            "version": self.version,
            "registers": {k: v for k, v in self.registers.items() if v},
            "error": self.error,
        }


def _disabled() -> set[str]:
    return {s.strip() for s in os.environ.get("SIMSAMPLE_DISABLE_PLUGINS", "").split(",") if s.strip()}


def _short_error(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" ({tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


class _PluginManager(pluggy.PluginManager):
    """A plugin manager that never looks inside the modules a plugin imported.

    pluggy reads an attribute off every name a plugin module holds to find hook functions;
    for a lazily imported library (``pd = lazy.load("pandas")``) that read would import it, and
    start-up would pay for every heavy library any plugin uses.
    """

    def parse_hookimpl_opts(self, plugin: object, name: str) -> Any:
        if isinstance(getattr(plugin, name, None), types.ModuleType):
            return None
        return super().parse_hookimpl_opts(plugin, name)


class PluginHost:
    """Registry of samplers, readers and adapters contributed by plugins."""

    def __init__(self, *, load_entrypoints: bool = True, builtins: tuple[str, ...] | None = None) -> None:
        self.pm = _PluginManager("simsample")
        self.pm.add_hookspecs(hookspecs)
        self._load_entrypoints = load_entrypoints
        self._builtins = builtin_plugins() if builtins is None else builtins
        self._loaded = False
        self.infos: dict[str, PluginInfo] = {}
        self._samplers: dict[str, Sampler] = {}
        self._readers: dict[str, Reader] = {}
        self._adapters: dict[str, Adapter] = {}
        self._commands_added = False

    # --- loading -----------------------------------------------------------------------------
    def add_plugin(
        self,
        plugin: object,
        name: str,
        *,
        origin: str = "object",
        distribution: str | None = None,
        version: str | None = None,
    ) -> PluginInfo:
        """Register a plugin object (a module or any object with hook functions)."""
        info = PluginInfo(name=name, origin=origin, distribution=distribution, version=version)
        self.infos[name] = info
        try:
            self.pm.register(plugin, name=name)
        except Exception as exc:  # pluggy raises ValueError / PluginValidationError
            info.error = _short_error(exc)
        if self._loaded and info.error is None:
            self._check_pending(name)
            self._collect_from(name)
        return info

    def load(self) -> None:
        """Import built-ins and entry points (once) and collect what they register."""
        if self._loaded:
            return
        disabled = _disabled()
        for modname in self._builtins:
            short = modname.rsplit(".", 1)[-1]
            if short in disabled:
                continue
            try:
                mod = importlib.import_module(modname)
            except Exception as exc:
                self.infos[short] = PluginInfo(short, "builtin", "simsample", __version__, error=_short_error(exc))
                continue
            self.add_plugin(mod, short, origin="builtin", distribution="simsample", version=__version__)
        if self._load_entrypoints:
            for ep in sorted(metadata.entry_points(group="simsample"), key=lambda e: e.name):
                if ep.name in disabled or ep.name in self.infos:
                    continue
                dist = getattr(ep, "dist", None)
                dname = dist.name if dist is not None else None
                dver = dist.version if dist is not None else None
                try:
                    obj = ep.load()
                except Exception as exc:
                    self.infos[ep.name] = PluginInfo(ep.name, "entrypoint", dname, dver, error=_short_error(exc))
                    continue
                self.add_plugin(obj, ep.name, origin="entrypoint", distribution=dname, version=dver)
        self._loaded = True
        for name in list(self.infos):
            if self.infos[name].error is None:
                self._check_pending(name)
        for name in list(self.infos):
            if self.infos[name].error is None:
                self._collect_from(name)

    def _check_pending(self, name: str) -> None:
        """A hook function without a matching spec (a misspelling) is the plugin's error."""
        plugin = self.pm.get_plugin(name)
        if plugin is None:
            return
        known = {n for n in dir(hookspecs) if n.startswith("register_")}
        for attr in dir(plugin):
            fn = getattr(plugin, attr, None)
            if isinstance(fn, types.ModuleType):  # an import, possibly lazy: reading it would load it
                continue
            opts = getattr(fn, "simsample_impl", None)
            if opts is not None and attr not in known and not opts.get("optionalhook"):
                self.infos[name].error = f"unknown hook {attr!r} (known: {', '.join(sorted(known))})"
                self.pm.unregister(name=name)
                return

    def check_pending(self) -> None:
        """Raise if any registered plugin implements a hook that has no specification."""
        self.load()
        self.pm.check_pending()

    def _impls(self, hook: str, name: str) -> list[Any]:
        return [i for i in getattr(self.pm.hook, hook).get_hookimpls() if i.plugin_name == name]

    def _collect_from(self, name: str) -> None:
        info = self.infos[name]
        targets: dict[str, dict[str, Any]] = {
            "samplers": self._samplers,
            "readers": self._readers,
            "adapters": self._adapters,
        }
        for kind in _KINDS:
            got: list[Any] = []
            for impl in self._impls(f"register_{kind}", name):
                try:
                    impl.function(register=got.append)
                except Exception as exc:
                    info.error = _short_error(exc)
                    return
            names = []
            for obj in got:
                oname = getattr(obj, "name", None)
                if not isinstance(oname, str) or not oname:
                    info.error = f"registered a {kind[:-1]} without a name: {obj!r}"
                    continue
                if oname in targets[kind]:
                    info.error = f"{kind[:-1]} {oname!r} is already registered by another plugin"
                    continue
                targets[kind][oname] = obj
                names.append(oname)
            info.registers[kind] = names

    # --- queries -----------------------------------------------------------------------------
    def samplers(self) -> dict[str, Sampler]:
        self.load()
        return dict(self._samplers)

    def readers(self) -> dict[str, Reader]:
        self.load()
        return dict(self._readers)

    def adapters(self) -> dict[str, Adapter]:
        self.load()
        return dict(self._adapters)

    def sampler(self, name: str) -> Sampler:
        """The sampler called ``name``, or a user error listing the installed ones."""
        found = self.samplers()
        if name not in found:
            raise UserError(f"no sampler named {name}; installed: {', '.join(sorted(found)) or 'none'}")
        return found[name]

    def reader(self, name: str) -> Reader:
        found = self.readers()
        if name not in found:
            raise UserError(f"no reader (format) named {name}; installed: {', '.join(sorted(found)) or 'none'}")
        return found[name]

    def adapter(self, name: str) -> Adapter:
        """The adapter called ``name``, or a user error saying how to install it."""
        found = self.adapters()
        if name not in found:
            installed = ", ".join(sorted(found)) or "none"
            if name in ADAPTER_DISTRIBUTIONS:
                raise UserError(f"no adapter named {name} (installed: {installed}); {install_hint(name)}")
            raise UserError(f"no adapter named {name}; installed: {installed}")
        return found[name]

    def add_commands(self, cli: click.Group) -> None:
        """Let every plugin add its commands; a failing or clashing plugin is recorded, not fatal."""
        if self._commands_added:
            return
        self._commands_added = True
        self.load()
        for name, info in self.infos.items():
            if info.error is not None:
                continue
            for impl in self._impls("register_commands", name):
                proxy = _ClashGuard(cli)
                try:
                    impl.function(cli=proxy)
                except Exception as exc:
                    info.error = _short_error(exc)
                    continue
                info.registers.setdefault("commands", []).extend(sorted(proxy.added))
                if proxy.clash:
                    info.error = f"command {proxy.clash!r} already exists"


class _ClashGuard:
    """A click group stand-in that refuses to replace an existing command."""

    def __init__(self, group: click.Group) -> None:
        self._group = group
        self.clash: str | None = None
        #: the names this plugin added (a command it added before, to the same group, counts:
        #: a second host in one process sees the group as the first one left it)
        self.added: list[str] = []

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        name = name or cmd.name
        if name in self._group.commands:
            if self._group.commands[name] is cmd:
                self.added.append(name)
            else:
                self.clash = name
            return
        self._group.add_command(cmd, name)
        self.added.append(name)

    def command(self, *args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], click.Command]:
        import click as _click

        def deco(f: Callable[..., Any]) -> click.Command:
            cmd = _click.command(*args, **kwargs)(f)
            self.add_command(cmd)
            return cmd

        return deco

    def group(self, *args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], click.Group]:
        import click as _click

        def deco(f: Callable[..., Any]) -> click.Group:
            grp = _click.group(*args, **kwargs)(f)
            self.add_command(grp)
            return grp

        return deco

    def __getattr__(self, item: str) -> Any:
        return getattr(self._group, item)


#: The simulator adapters the project ships, each its own distribution under ``adapters/``.
ADAPTER_DISTRIBUTIONS = {"accelsim": "simsample-accelsim", "macsim": "simsample-macsim", "hyfiss": "simsample-hyfiss"}


def install_hint(name: str) -> str:
    """How to install the adapter ``name``: it is a separate distribution, in the repository's
    ``adapters/`` folder (an extra cannot point at a local folder, so the command names it)."""
    dist = ADAPTER_DISTRIBUTIONS[name]
    return (
        f"install its distribution {dist}: pip install -e adapters/{name} (from the simsample repository; `make "
        "setup` installs every adapter)"
    )


_HOST: PluginHost | None = None


def get_host() -> PluginHost:
    """The process-wide plugin host (created on first use)."""
    global _HOST
    if _HOST is None:
        _HOST = PluginHost()
    return _HOST


def set_host(host: PluginHost | None) -> None:
    """Replace the process-wide host (tests use this to install a host of their own)."""
    global _HOST
    _HOST = host


def workload_adapter(workload: Workload) -> Adapter | None:
    """The installed adapter of the simulator whose files ``workload`` was read from (an adapter
    registers under its reader's format name), or None for a profile no adapter reads: a sampler
    that needs what only the simulator's files hold (GCL-Sampler's instruction streams) asks it
    through :mod:`simsample.sdk` rather than knowing the plugin host."""
    return get_host().adapters().get(workload.format or "")
