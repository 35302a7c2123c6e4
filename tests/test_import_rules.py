"""The package's import rules (docs/architecture.md, "Layers and imports").

1. No module imports a private name (``_x``) from another spare_core module: what another module
   needs is public there.
2. A private module (``pkg._m``) is imported only from inside its own package ``pkg``; the shared
   infrastructure modules at the top (``spare_core._validate``, ``_seeding``, ``_native``,
   ``_results``) serve the whole library.
"""
from __future__ import annotations

import ast
from pathlib import Path

import spare_core

ROOT = Path(spare_core.__file__).resolve().parent
SHARED = {"spare_core._validate", "spare_core._seeding", "spare_core._native", "spare_core._results"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports():
    for path in sorted(ROOT.rglob("*.py")):
        mod = _module_name(path)
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(mod, is_pkg, node)
                if target.startswith("spare_core"):
                    yield mod, path, node.lineno, target, [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("spare_core"):
                        yield mod, path, node.lineno, a.name, []


def _private_module(target: str) -> str | None:
    """The first private component's module path (``a.b._c`` for ``a.b._c.d``), or None."""
    parts = target.split(".")
    for i, p in enumerate(parts):
        if p.startswith("_") and not p.startswith("__"):
            return ".".join(parts[: i + 1])
    return None


def test_no_private_name_is_imported_across_modules():
    bad = []
    for mod, path, line, target, names in _imports():
        for n in names:
            if n.startswith("_") and not n.startswith("__") and target != mod:
                # importing a private submodule of one's own package is rule 2's business
                if _private_module(f"{target}.{n}") == f"{target}.{n}" and mod.startswith(target):
                    continue
                bad.append(f"{path.relative_to(ROOT.parent)}:{line}: {n} from {target}")
    assert not bad, "private names imported across modules:\n" + "\n".join(bad)


def test_private_modules_are_imported_only_inside_their_package():
    bad = []
    for mod, path, line, target, names in _imports():
        for full in [target] + [f"{target}.{n}" for n in names]:
            priv = _private_module(full)
            if priv is None or priv in SHARED or priv == "spare_core._ext" or priv.startswith("spare_core._ext."):
                continue
            owner = priv.rsplit(".", 1)[0]
            if not (mod == owner or mod.startswith(owner + ".")):
                bad.append(f"{path.relative_to(ROOT.parent)}:{line}: {full}")
    assert not bad, "private modules imported from outside their package:\n" + "\n".join(bad)


# docs/architecture.md, "Layers": a module imports only from its own layer or below.
LAYERS = [
    ("infrastructure", {"spare_core", "spare_core._validate", "spare_core._native", "spare_core._seeding",
                        "spare_core._results", "spare_core._files", "spare_core._writer",
                        "spare_core._registry", "spare_core._params", "spare_core._limits",
                        "spare_core._deprecation", "spare_core._stats"}),
    ("values and kernels", {"spare_core.distributions", "spare_core.topology", "spare_core.checkpoint",
                            "spare_core.graph",
                            # the old paths of spare_core.graph's modules (deprecated, one release)
                            "spare_core.matching", "spare_core.flow"}),
    ("models", {"spare_core.events", "spare_core.pacing", "spare_core.stragglers"}),
    ("strategies", {"spare_core.strategies",
                    # the old paths of spare_core.strategies.spare's modules (deprecated, one release)
                    "spare_core.layout", "spare_core.rectlr", "spare_core.analytic", "spare_core.domain_endurance"}),
    ("simulation", {"spare_core.sim"}),
    ("product", {"spare_core.scenario_file", "spare_core.sweeps", "spare_core.commands", "spare_core.cli",
                 "spare_core.__main__"}),
]


def _layer(module: str) -> int:
    parts = module.split(".")
    head = ".".join(parts[:2])
    for i, (_, members) in enumerate(LAYERS):
        if head in members:
            return i
    raise AssertionError(f"{module} is in no layer: add it to LAYERS and to docs/architecture.md")


def test_every_module_has_a_layer():
    for path in sorted(ROOT.rglob("*.py")):
        mod = _module_name(path)
        if not mod.startswith("spare_core._ext"):
            _layer(mod)


def test_imports_go_down_the_layers():
    bad = []
    for mod, path, line, target, names in _imports():
        if target.startswith("spare_core._ext"):
            continue
        if _layer(target) > _layer(mod):
            bad.append(f"{path.relative_to(ROOT.parent)}:{line}: {mod} ({LAYERS[_layer(mod)][0]}) imports "
                       f"{target} ({LAYERS[_layer(target)][0]})")
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_the_lazy_top_level_reaches_every_public_module():
    public = {p.stem if p.name != "__init__.py" else p.parent.name
              for p in ROOT.glob("*.py") if not p.stem.startswith("_")}
    public |= {p.parent.name for p in ROOT.glob("*/__init__.py") if not p.parent.name.startswith("_")}
    public -= {"cli", "commands"}  # the command line, not a library module
    # deprecated paths of spare_core.graph's and spare_core.strategies.spare's modules (they warn)
    public -= {"matching", "flow", "layout", "rectlr", "analytic", "domain_endurance"}
    missing = sorted(public - set(dir(spare_core)))
    assert not missing, f"spare_core.__getattr__ does not reach {missing}"
    for name in public:
        assert getattr(spare_core, name).__name__ == f"spare_core.{name}"
