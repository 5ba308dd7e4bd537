"""The snapshot cache from Python: `import reservoir` reads RESERVOIR_CACHE as the CLI does, so a
large snapshot is parsed once and loaded from the folder after that, with the same answers; "off"
writes nothing."""

import json
import os
import subprocess
import sys
import time

import pytest

from api_support import run_cli

CODE = """
import json, sys
import reservoir
trace = reservoir.load(sys.argv[1])
print(json.dumps(trace.info(), sort_keys=True))
"""


def _info(path, cache, xdg=None):
    env = {k: v for k, v in os.environ.items() if k != "RESERVOIR_CACHE"}
    if cache is not None:
        env["RESERVOIR_CACHE"] = str(cache)
    if xdg is not None:
        env["XDG_CACHE_HOME"] = str(xdg)
    p = subprocess.run([sys.executable, "-c", CODE, str(path)], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    path = tmp_path_factory.mktemp("cache") / "synth.pickle"
    rc, _, err = run_cli("synth", path, "--events", 900_000)  # 35 MB: over the cache's 32 MiB
    assert rc == 0, err
    time.sleep(2.1)  # a file written this lately is not kept
    return path


def test_a_large_snapshot_is_parsed_once_and_loaded_after(large, tmp_path):
    cache = tmp_path / "cache"
    first = _info(large, cache)
    entries = list(cache.glob("*.snapshot"))
    assert len(entries) == 1, "the first read should have been kept"
    used = entries[0].stat().st_mtime_ns
    time.sleep(0.05)
    second = _info(large, cache)
    assert second == first
    assert entries[0].stat().st_mtime_ns > used, "the second read should have loaded the entry"


def test_unset_is_the_standard_folder_and_off_writes_nothing(large, tmp_path):
    xdg = tmp_path / "xdg"
    off = _info(large, "off", xdg)
    assert not xdg.exists()
    assert _info(large, None, xdg) == off
    assert len(list((xdg / "reservoir").glob("*.snapshot"))) == 1
