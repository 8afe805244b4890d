"""The README's Python examples run (STYLE: examples in README run in CI)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples() -> None:
    assert python_blocks(), "README.md lost its Python examples"


def test_readme_python_examples_run(tmp_path: Path) -> None:
    """Each ```python block of the README runs as a script and prints what it promises."""
    for index, block in enumerate(python_blocks()):
        script = tmp_path / f"readme_{index}.py"
        script.write_text(block)
        result = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,  # examples may create files (databases, artifact folders)
        )
        assert result.returncode == 0, result.stderr
        expected = re.findall(r"# (\{.*\})$", block, flags=re.M)
        for line in expected:
            assert line in result.stdout, (line, result.stdout)
        if "It is Paris." in block:
            assert "geographer: It is Paris." in result.stdout
