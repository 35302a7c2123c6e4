"""The README's library example runs and its certificates hold."""
import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no python example"
    ns: dict = {}
    for code in blocks:
        exec(compile(code, str(README), "exec"), ns)
    out = capsys.readouterr().out
    assert "kind='reordered'" in out and "SPARe+CKPT" in out and "status='optimal'" in out
    # the example's claims: the König cover is as large as the matching, and covers every edge
    m, graph, left, right = ns["m"], ns["graph"].tocoo(), ns["left"], ns["right"]
    assert left.sum() + (right * m.capacity).sum() == m.size
    assert np.all(left[graph.row] | right[graph.col])
