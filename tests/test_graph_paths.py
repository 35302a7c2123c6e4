"""spare_core.graph: the package's names, and the deprecated paths spare_core.matching and
spare_core.flow (one release): the same objects, one DeprecationWarning that names the line
that imported the old path."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import spare_core.graph as graph
from spare_core.graph import flow, matching

PUBLIC = {"matching": ("Matching", "hopcroft_karp", "IncrementalMatching"),
          "flow": ("FlowResult", "CertificateCheck", "min_cost_flow", "max_flow_min_cost",
                   "check_flow_certificate")}


def test_the_package_reaches_its_public_names():
    for mod, names in PUBLIC.items():
        assert set(names) <= set(getattr(graph, mod).__all__)
        for name in names:
            assert getattr(graph, name) is getattr({"matching": matching, "flow": flow}[mod], name)
    assert set(dir(graph)) >= {"matching", "flow", *PUBLIC["matching"], *PUBLIC["flow"]}
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        graph.nothing  # noqa: B018


# each way of reaching an old path, and the line of the script that does it (line 3: the first
# two lines set up the warnings filter)
WAYS = {
    "import spare_core.matching as m": ("matching", 3),
    "from spare_core.matching import hopcroft_karp": ("matching", 3),
    "from spare_core import flow": ("flow", 3),
    "import spare_core\nm = spare_core.flow": ("flow", 4),
}


@pytest.mark.parametrize("code", list(WAYS))
def test_old_paths_warn_once_at_the_importing_line(tmp_path, code):
    mod, line = WAYS[code]
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent(f"""\
        import json, warnings
        warnings.simplefilter("always")
        """) + code + textwrap.dedent(f"""
        with warnings.catch_warnings(record=True) as again:
            warnings.simplefilter("always")
            import spare_core.{mod}
        import spare_core.graph.{mod} as new, spare_core.{mod} as old
        same = all(getattr(old, n) is getattr(new, n) for n in old.__all__)
        print(json.dumps({{"same": same, "all": old.__all__, "again": len(again)}}))
        """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert got["same"] and set(got["all"]) == set(PUBLIC[mod]) and got["again"] == 0
    warned = [ln for ln in out.stderr.splitlines() if "DeprecationWarning" in ln]
    assert len(warned) == 1, out.stderr
    assert warned[0].startswith(f"{script}:{line}: DeprecationWarning: spare_core.{mod} is deprecated")
    assert f"import from spare_core.graph.{mod} instead" in warned[0]


def test_the_new_paths_do_not_warn():
    code = ("import warnings; warnings.simplefilter('error')\n"
            "import spare_core.graph, spare_core.graph.matching, spare_core.graph.flow\n"
            "from spare_core.graph import hopcroft_karp, min_cost_flow\n"
            "import spare_core; spare_core.graph.flow")
    subprocess.run([sys.executable, "-c", code], check=True)
