"""reservoir.report and Trace.report: the command line's `report --json`, the page and the table
written as `--html` / `--markdown` write them, variants as whatif keywords, outputs checked first."""

import shutil

import pytest

import reservoir
from api_support import LOAD_POINT, TINY, cli_json

VARIANT_FLAGS = f"post-load=--cleanup '{LOAD_POINT}'"


def test_report_equals_the_command_line(tmp_path):
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    r = reservoir.report(TINY, html=html, markdown=md, variants={"post-load": {"cleanup": [LOAD_POINT]}})
    cli_html, cli_md = tmp_path / "c.html", tmp_path / "c.md"
    cli = cli_json("report", TINY, "--variant", VARIANT_FLAGS, "--html", cli_html, "--markdown", cli_md)
    assert r == cli
    assert [v["name"] for v in r["variants"]] == ["recording", "post-load"]
    assert html.read_bytes() == cli_html.read_bytes() and len(html.read_bytes()) > 1000
    assert md.read_text() == cli_md.read_text()
    assert "| post-load |" in md.read_text()


def test_the_trace_method_and_several_ranks(tmp_path):
    rank1 = TINY.with_name("resume-main.rank1.pickle")
    t = reservoir.load(TINY)
    one = t.report(cleanup=[LOAD_POINT])
    assert one == reservoir.report(TINY, cleanup=[LOAD_POINT])
    assert [v["name"] for v in one["variants"]] == ["recording", "edited"]
    two = reservoir.report([TINY, rank1], sweep=True, max_candidates=8, jobs=1)
    assert len(two["ranks"]) == 2 and two["sweep"] is not None


def test_a_sweep_candidates_kwargs_are_a_variant():
    t = reservoir.load(TINY)
    best = t.sweep(top=1, jobs=1, settings=False)["candidates"][0]
    r = t.report(variants={"best": best["kwargs"]})
    assert [v["name"] for v in r["variants"]] == ["recording", "best"]


def test_outputs_are_checked_before_any_work(tmp_path):
    trace = tmp_path / "x.pickle"
    shutil.copyfile(TINY, trace)
    with pytest.raises(ValueError, match="html"):
        reservoir.report(trace, html=trace)
    with pytest.raises(ValueError, match="markdown"):
        reservoir.report(trace, markdown=tmp_path / "x.json")  # the capture JSON beside it
    out = tmp_path / "same"
    with pytest.raises(ValueError):
        reservoir.report(trace, html=out, markdown=out)
    assert not out.exists() and not (tmp_path / "x.json").exists()
    assert trace.read_bytes() == TINY.read_bytes()


def test_wrong_keywords_and_variants_say_so():
    with pytest.raises(TypeError, match="cleanups"):
        reservoir.report(TINY, cleanups=[LOAD_POINT])
    with pytest.raises(TypeError, match="variants"):
        reservoir.report(TINY, variants=[("a", {})])
    with pytest.raises(TypeError, match="clean"):
        reservoir.report(TINY, variants={"a": {"clean": LOAD_POINT}})
    with pytest.raises(ValueError, match="variant a"):
        reservoir.report(TINY, variants={"a": {"cleanup": ["after:no_such_function_anywhere"]}})
