"""The policy registry: strategies by name, their declared parameters and shorthands.

:data:`POLICY_REGISTRY` maps a short name (``"spare"``) to a :class:`RegisteredPolicy`: the
factory that builds the policy at a redundancy r, the label results carry, whether it uses r,
its declared parameters (:class:`spare_core._params.Param`: kind, unit, range, default) and
the scenario-file shorthands it reads. The built-ins (``ckpt``, ``rep``, ``rep-disjoint``,
``spare``, ``elastic``) are entry points of their own packages, admitted through the same door
(:class:`spare_core._registry.Registry`) as the policies installed packages declare under the
``spare_core.policies`` entry-point group. :func:`make_policy`, studies, scenario files, sweep
specs, maps and the CLI read it; :func:`register_policy` adds a user's policy in the process.
Wherever a name is accepted, a :class:`Policy` object (one fixed policy) or a factory of r (a
callable ``f(r) -> Policy``, e.g. a Policy subclass) is accepted too (:func:`policy_at`).
"""
from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .._params import Param, read_options
from .._registry import Registry, check_name
from .._validate import check_choice
from .protocol import INTERVAL_RULES, Policy, is_policy

__all__ = ["POLICY_REGISTRY", "POLICY_NAMES", "DEFAULT_POLICIES", "ENTRY_POINT_GROUP", "INTERVAL", "RegisteredPolicy",
           "register_policy", "registered_policy", "policy_names", "policy_entry", "load_plugins", "make_policy",
           "policy_at", "uses_redundancy", "PolicyFactory"]

#: a callable building the policy at redundancy r
PolicyFactory = Callable[[int], Policy]

#: the policies a comparison runs when none are named (scenario files, sweep specs, sweep())
DEFAULT_POLICIES = ("ckpt", "rep", "spare")

#: the entry-point group through which an installed package adds policies
ENTRY_POINT_GROUP = "spare_core.policies"

#: the built-in names, in the order listings show them (each its package's entry point)
POLICY_NAMES = ("ckpt", "rep", "rep-disjoint", "spare", "elastic")
_BUILTINS = {
    "ckpt": "spare_core.strategies.checkpoint_only:ENTRY",
    "rep": "spare_core.strategies.replication:ENTRY",
    "rep-disjoint": "spare_core.strategies.replication:DISJOINT_ENTRY",
    "spare": "spare_core.strategies.spare:ENTRY",
    "elastic": "spare_core.strategies.elastic:ENTRY",
}

#: the checkpoint interval every built-in declares: seconds of compute between saves, or a rule
INTERVAL = Param("interval", "interval", "auto", "compute between checkpoints, or a rule (auto, young, daly)",
                 choices=INTERVAL_RULES)


def _factory_options(factory) -> tuple[str, ...] | None:
    """The keyword options a factory takes besides r (None: it takes any keyword)."""
    try:
        params = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):  # a builtin or C callable: trust it
        return None
    kind = inspect.Parameter
    if any(p.kind is kind.VAR_KEYWORD for p in params):
        return None
    if params and params[0].kind in (kind.POSITIONAL_ONLY, kind.POSITIONAL_OR_KEYWORD):
        params = params[1:]  # r
    return tuple(p.name for p in params if p.kind in (kind.POSITIONAL_OR_KEYWORD, kind.KEYWORD_ONLY))


@dataclass(frozen=True)
class RegisteredPolicy:
    """One entry of :data:`POLICY_REGISTRY`: a policy as the files, specs and commands know it.

    Attributes
    ----------
    name : str
        Short name used in code, scenario files, sweep specs and the CLI (``"spare"``).
    factory : callable
        ``factory(r, **options) -> Policy``; ``r`` is None when ``uses_redundancy`` is False.
    label : str
        The label its results carry (``Policy.name``, e.g. ``"SPARe+CKPT"``); two entries
        never share one, so their cells can be told apart when they run side by side.
    uses_redundancy : bool
        False for a policy without redundancy (checkpoint-only): a sweep runs it once, at
        r = 1, and the redundancy policies' r = 1 cells are the same policy in all but name
        (:meth:`ResultSet.ranking` then ranks them at r >= 2).
    options : tuple of str or None
        The names of the options it takes (those of :attr:`params` when declared); None:
        whatever the factory accepts.
    compare_keys : mapping
        Keys of a scenario file's ``[compare]`` table this policy reads as a shorthand for
        its options: key -> ``f(value) -> dict of options`` (SPARe's ``compare.layout``).
    description : str
        One line for listings (``spare run --help``).
    params : tuple of Param
        The declared options: kind, unit, range, default. Values given anywhere (a
        ``[policy.NAME]`` table, ``--set``, a sweep spec, a map axis, :func:`make_policy`) are
        read through them (``"2 min"`` is 120 s); without declarations values reach the
        factory as given.
    table : str or None
        A top-level table of a scenario file that is a shorthand for ``[policy.NAME]``
        (elastic's ``[elastic]``); it takes the same options.
    """

    name: str
    factory: Callable
    label: str
    uses_redundancy: bool = True
    options: tuple[str, ...] | None = None
    compare_keys: Mapping[str, Callable] = field(default_factory=dict)
    description: str = ""
    params: tuple[Param, ...] = ()
    table: str | None = None

    def check_options(self, options: Mapping, where: str = "", prefix: str | None = None) -> dict:
        """``options`` read by the declared parameters (units, integers), names checked
        against :attr:`options`; a bad value's message names ``<prefix>.<option>`` (default
        prefix ``policy.NAME``).

        Raises
        ------
        ValueError
            An option this policy does not take (the message lists those it does), or a
            value outside its declared kind and range (the message names
            ``policy.NAME.OPTION``).
        """
        if not isinstance(options, Mapping):
            raise TypeError(f"{where}options of policy {self.name!r} must be a table/dict, got {type(options).__name__}")
        allowed = self.options if self.options is not None else _factory_options(self.factory)
        if allowed is not None:
            unknown = sorted(set(options) - set(allowed))
            if unknown:
                raise ValueError(f"{where}policy {self.name!r} has no option {unknown[0]!r} "
                                 f"(its options: {list(allowed)})")
        declared = [p for p in self.params if p.name in options]
        out = dict(options)
        out.update(read_options(declared, {p.name: options[p.name] for p in declared},
                                prefix or f"policy.{self.name}"))
        return out

    def build(self, r=None, **options) -> Policy:
        """The policy at redundancy ``r`` (ignored without redundancy) with ``options``,
        carrying this entry's label."""
        options = self.check_options(options)
        if not self.uses_redundancy:
            out = self.factory(None, **options)
        elif r is None:
            raise ValueError(f"policy {self.name!r} needs a redundancy r")
        else:
            out = self.factory(r, **options)
        if not is_policy(out):
            raise TypeError(f"policy {self.name!r}: the factory must return a Policy, got {type(out).__name__}")
        if getattr(out, "name", None) != self.label:
            # the registry's label is what results carry: two entries building one class
            # (a variant, a plugin's preset) stay apart in every table
            out = copy.copy(out)
            out.name = self.label
        return out

    def param(self, option: str) -> Param | None:
        """The declaration of ``option`` (None: not declared)."""
        return next((p for p in self.params if p.name == option), None)


def _entry(name, factory, *, label, uses_redundancy=True, options=None, compare_keys=None, description="",
           params=None, table=None) -> RegisteredPolicy:
    """A checked :class:`RegisteredPolicy` (not registered)."""
    if not isinstance(label, str) or not label:
        raise ValueError(f"policy label must be a non-empty string, got {label!r}")
    if not callable(factory):
        raise TypeError(f"policy factory must be callable, got {type(factory).__name__}")
    params = tuple(params or ())
    if not all(isinstance(p, Param) for p in params):
        raise TypeError("params must be a sequence of spare_core.strategies.Param")
    if options is not None:
        if isinstance(options, str) or not all(isinstance(o, str) for o in options):
            raise TypeError(f"options must be a sequence of option names, got {options!r}")
        options = tuple(options)
        undeclared = [p.name for p in params if p.name not in options]
        if undeclared:
            raise ValueError(f"params {undeclared} are not among the options {list(options)}")
    elif params:
        options = tuple(p.name for p in params)
    compare_keys = dict(compare_keys or {})
    if not all(isinstance(k, str) and callable(f) for k, f in compare_keys.items()):
        raise TypeError("compare_keys must map [compare] key names to callables returning options")
    if table is not None:
        check_name(table, "shorthand table")
    return RegisteredPolicy(name, factory, label, bool(uses_redundancy), options, compare_keys, str(description),
                            params, table)


def _add(name: str, entry: RegisteredPolicy, replace: bool) -> RegisteredPolicy:
    check_name(name, "policy")
    known = POLICY_REGISTRY.raw()
    if name in known and not replace:
        raise ValueError(f"policy name {name!r} is already registered (pass replace=True to replace it)")
    twin = [e.name for e in known.values() if e.label == entry.label and e.name != name]
    if twin:
        raise ValueError(f"policy label {entry.label!r} is already the label of policy {twin[0]!r}: results could "
                         "not be told apart (give the policy another label)")
    if entry.table is not None:
        taken = [e.name for e in known.values() if e.table == entry.table and e.name != name]
        if taken:
            raise ValueError(f"shorthand table [{entry.table}] is already policy {taken[0]!r}'s")
    return POLICY_REGISTRY.add(name, entry, replace=True)


def register_policy(name, factory, *, label, uses_redundancy=True, options=None, compare_keys=None,
                    description="", params=None, table=None, replace=False) -> RegisteredPolicy:
    """Make a policy available by name to :func:`make_policy`, studies, files, specs and the CLI.

    Parameters
    ----------
    name : str
        Short name (letters, digits, ``-`` and ``_``).
    factory : callable
        ``factory(r, **options) -> Policy`` (a Policy subclass taking r first qualifies);
        with ``uses_redundancy=False`` it is called as ``factory(None, **options)``.
    label : str
        The label its results carry; no two entries may share one.
    uses_redundancy : bool, default True
    options : sequence of str, optional
        The options it takes (default: its ``params``' names, else the factory's keyword
        parameters).
    compare_keys : mapping, optional
        ``[compare]`` keys of a scenario file that are shorthands for its options
        (:class:`RegisteredPolicy`).
    description : str, optional
    params : sequence of Param, optional
        The declared options (kind, unit, range, default): values are read through them
        wherever they are given, units included (``swap = "2 min"``).
    table : str, optional
        A top-level scenario-file table that is a shorthand for ``[policy.NAME]``.
    replace : bool, default False
        Allow replacing an existing entry (the built-ins included).

    Returns
    -------
    RegisteredPolicy

    Raises
    ------
    TypeError, ValueError
        Bad name, label, factory or declarations; the name, the label or the table is taken
        and ``replace`` is False.

    Examples
    --------
    >>> from spare_core.strategies import SpareCheckpoint
    >>> entry = register_policy("spare-sidon", lambda r, interval="auto": SpareCheckpoint(r, interval, "sidon"),
    ...                         label="SPARe+CKPT (Sidon)", params=[INTERVAL])
    >>> make_policy("spare-sidon", 4, interval="30 min").interval, make_policy("spare-sidon", 4).name
    (1800.0, 'SPARe+CKPT (Sidon)')
    >>> del POLICY_REGISTRY["spare-sidon"]
    """
    check_name(name, "policy")
    POLICY_REGISTRY.load()  # the built-ins and plugins first: their names and labels are taken
    entry = _entry(name, factory, label=label, uses_redundancy=uses_redundancy, options=options,
                   compare_keys=compare_keys, description=description, params=params, table=table)
    return _add(name, entry, replace)


def policy_entry(factory, *, label, uses_redundancy=True, options=None, compare_keys=None, description="",
                 params=None, table=None) -> RegisteredPolicy:
    """A registry entry for an entry point, not registered yet (its name is the entry point's):
    ``MY_POLICY = policy_entry(MyPolicy, label="Mine", params=[Param("swap", "duration0")])``.
    The built-in strategies declare theirs the same way."""
    return _entry("", factory, label=label, uses_redundancy=uses_redundancy, options=options,
                  compare_keys=compare_keys, description=description, params=params, table=table)


def _admit(registry: Registry, name: str, obj: Any) -> None:
    """The door every entry point goes through, built-in or installed."""
    if name in registry.raw():
        raise ValueError("the name is taken")
    if isinstance(obj, RegisteredPolicy):
        entry = RegisteredPolicy(name, obj.factory, obj.label, obj.uses_redundancy, obj.options, obj.compare_keys,
                                 obj.description, obj.params, obj.table)
    elif isinstance(obj, type) and issubclass(obj, Policy):
        params = tuple(getattr(obj, "params", ()) or ())
        entry = _entry(name, obj, label=obj.name, uses_redundancy=getattr(obj, "uses_redundancy", True),
                       description=(obj.__doc__ or "").strip().split("\n")[0], params=params or None)
    else:
        raise TypeError(f"must name a Policy subclass or a RegisteredPolicy, got {type(obj).__name__}")
    _add(name, entry, replace=False)


#: name -> :class:`RegisteredPolicy`: the built-ins, those registered in the process and those of
#: installed plugins (loaded on first read)
POLICY_REGISTRY = Registry("policy", ENTRY_POINT_GROUP, _BUILTINS, _admit)


def load_plugins() -> list[str]:
    """Admit the built-in strategies and the policies installed packages declare under the
    ``spare_core.policies`` entry-point group (once per process; later calls do nothing).

    An entry point ``mine = "my_pkg:MyPolicy"`` names a Policy subclass (registered under
    the entry point's name with its ``name`` as label, ``uses_redundancy`` if it sets one,
    its ``params`` if it declares them, else its constructor's keywords as options) or a
    :class:`RegisteredPolicy` (built with :func:`policy_entry`). A plugin that fails to load,
    or whose name, label or table is taken, is skipped with a warning.

    Returns
    -------
    list of str
        The names admitted by this call.
    """
    return POLICY_REGISTRY.load()


def policy_names() -> tuple[str, ...]:
    """The names of the live registry: the built-ins, those registered in this process and
    those of installed plugins."""
    return tuple(POLICY_REGISTRY)


def registered_policy(name, what="policy") -> RegisteredPolicy:
    """The registry entry of ``name`` (plugins loaded first).

    Raises
    ------
    ValueError
        An unknown name; the message lists the registered ones.
    """
    check_choice(name, what, policy_names())
    return POLICY_REGISTRY[name]


def make_policy(name, r=None, **kwargs) -> Policy:
    """Build a registered policy by name.

    Parameters
    ----------
    name : str
        A name of the live registry (:func:`policy_names`): built in, "ckpt"
        (checkpoint-only), "rep" (Rep+CKPT on cyclic stacks), "rep-disjoint" (Rep+CKPT with
        disjoint replica sets), "spare" (SPARe+CKPT), "elastic" (elastic data parallelism).
    r : int, optional
        Redundancy (ignored by policies without one, required by the others).
    **kwargs
        The policy's options (e.g. ``interval``; :attr:`RegisteredPolicy.params`), in units
        where declared (``interval="30 min"``).

    Returns
    -------
    Policy

    Raises
    ------
    ValueError
        Unknown name, an option the policy does not take, a bad value, or a missing ``r``.

    Examples
    --------
    >>> make_policy("spare", 8)
    SpareCheckpoint(interval='auto', redundancy=8, offsets=None)
    >>> make_policy("elastic", reconfigure="2 min").reconfigure
    120.0
    """
    return registered_policy(name).build(r, **kwargs)


def _check_source(policy, what):
    if isinstance(policy, str):
        registered_policy(policy, what)
    elif not (is_policy(policy) or callable(policy)):
        raise TypeError(
            f"{what} must be a registered name ({sorted(policy_names())}), a Policy object or a factory of r, "
            f"got {type(policy).__name__}"
        )


def uses_redundancy(policy, what="policy") -> bool:
    """Whether a sweep should vary r for ``policy`` (a name, a Policy object or a factory).

    A registered name answers from its entry; a Policy object is one fixed policy (False: it
    runs at its own r); any other callable is a factory of r (True).
    """
    _check_source(policy, what)
    if isinstance(policy, str):
        return POLICY_REGISTRY[policy].uses_redundancy
    return not is_policy(policy)


def policy_at(policy, r=None, *, interval=None, what="policy", **kwargs) -> Policy:
    """The policy object for a name, a Policy object or a factory, at redundancy ``r``.

    Parameters
    ----------
    policy : str, Policy or callable
        A registered name (built with ``r`` and ``kwargs``), a Policy object (returned as it
        is; ``r`` and ``kwargs`` must not ask for something else) or a factory
        ``f(r, **kwargs) -> Policy``.
    r : int, optional
    interval : float or str, optional
        Replaces the policy's checkpoint interval (:meth:`Policy.with_interval`), whatever
        ``kwargs`` say: a study's interval axis wins over a policy's own option.
    what : str
        The argument's name for error messages.
    **kwargs
        Options of a named policy or a factory.

    Returns
    -------
    Policy

    Raises
    ------
    TypeError, ValueError
        Unknown name, a factory that does not return a policy, options for a Policy object.
    """
    _check_source(policy, what)
    if isinstance(policy, str):
        out = make_policy(policy, r, **kwargs)
    elif is_policy(policy):
        if kwargs:
            raise ValueError(f"{what}: a Policy object takes no options, got {sorted(kwargs)}")
        out = policy
    else:
        out = policy(r, **kwargs)
        if not is_policy(out):
            raise TypeError(f"{what}: the factory must return a Policy, got {type(out).__name__}")
    if interval is not None:
        if not callable(getattr(out, "with_interval", None)):
            raise TypeError(f"{what}: {type(out).__name__} has no with_interval(), so its interval cannot be swept")
        out = out.with_interval(interval)
    return out
