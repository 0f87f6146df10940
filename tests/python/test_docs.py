"""Every ```python block of docs/python.md runs, in order, in one namespace."""

import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(os.environ.get("TENFERRO_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
DOC = ROOT / "docs" / "python.md"


def blocks():
    text = DOC.read_text()
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_the_page_has_examples():
    assert len(blocks()) >= 10


def test_python_md_snippets_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns = {}
    for i, code in enumerate(blocks()):
        try:
            exec(compile(code, f"docs/python.md block {i + 1}", "exec"), ns)
        except Exception as e:  # noqa: BLE001
            pytest.fail(f"docs/python.md block {i + 1} failed: {type(e).__name__}: {e}\n{code}")


def test_readme_python_quickstart_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert code, "README.md has a Python quickstart"
    ns = {}
    for i, c in enumerate(code):
        exec(compile(c, f"README.md python block {i + 1}", "exec"), ns)
