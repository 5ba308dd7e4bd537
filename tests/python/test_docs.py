"""The examples of docs/python.md run: every ```python block, in order, in one namespace, from the
repository root (a block after an `<!-- not run: ... -->` line is skipped: it needs torch and a GPU,
or the shared traces);
then every test_* function the blocks define (the pytest gate examples) is called."""

import os
import re

import pytest

from api_support import SOURCE

DOC = SOURCE / "docs" / "python.md"
BLOCK = re.compile(r"(<!-- not run[^>]*-->\s*\n)?```python\n(.*?)```", re.S)


def blocks():
    found = [(m.group(1) is None, m.group(2)) for m in BLOCK.finditer(DOC.read_text())]
    return [code for run, code in found if run], [code for run, code in found if not run]


def test_the_page_has_examples_that_run():
    run, skipped = blocks()
    # What is not run needs torch and a GPU, or the shared traces: three blocks at most.
    assert len(run) >= 6 and len(skipped) <= 3, (len(run), len(skipped))


def test_the_examples_of_docs_python_md_run(capsys, monkeypatch):
    monkeypatch.chdir(SOURCE)
    namespace = {"__name__": "docs_python_md"}
    for i, code in enumerate(blocks()[0]):
        try:
            exec(compile(code, f"{DOC}:block{i + 1}", "exec"), namespace)
        except Exception as e:
            pytest.fail(f"docs/python.md block {i + 1} raised {type(e).__name__}: {e}\n{code}")
    tests = [f for name, f in namespace.items() if name.startswith("test_") and callable(f)]
    assert len(tests) >= 2, "the gate examples define test functions"
    for test in tests:
        test()
    out = capsys.readouterr().out
    assert "reserved after the load:" in out and "FAIL:" in out and "closest frames" in out
