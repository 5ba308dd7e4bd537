"""The shapes of reservoir's results, for type checkers (each is the dict of the command's ``--json``;
docs/json.md says what every key means). Plain dicts at run time: these TypedDicts only name
their most used keys (``total=False``: a report may hold more, and some keys only in some cases).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, TypedDict

__all__ = ["Probe", "Oom", "RunFigures", "WhatIfReport", "WhatIfOverTraces", "CandidateChange", "SweepCandidate",
           "SweepReport", "GateCondition", "GateVerdict", "CheckReport", "InfoReport", "ExportResult",
           "ScaleTarget"]


class Probe(TypedDict, total=False):
    reserved: int
    allocated: int
    active: int


class Oom(TypedDict, total=False):
    event_index: int
    size: int
    count: int
    request_index: int  # which allocation request failed (0-based): the same in a re-run
    reserved_after: int  # reserved right after it: where a program that does not catch it ends
    allocated_after: int


class RunFigures(TypedDict, total=False):
    """One run of a what-if ("baseline", the recorded program, or "whatif", the edited one)."""
    peak_reserved: int
    peak_allocated: int
    final_reserved: int
    final_allocated: int
    probes: Dict[str, Probe]
    demands: List[Dict[str, Any]]
    oom: Optional[Oom]
    at_peak: Optional[Dict[str, Any]]
    empty_cache_calls: int
    address_drift: int
    decision_change_at: Optional[int]


class WhatIfReport(TypedDict, total=False):
    trace: str
    baseline: RunFigures
    whatif: RunFigures
    saving: int
    recorded_peak_reserved: int
    baseline_matches_recording: bool
    capacity: Optional[int]
    capacity_source: str
    edits: List[str]
    notes: List[str]


class WhatIfOverTraces(TypedDict, total=False):
    traces: List[WhatIfReport]
    max_over_traces: Dict[str, int]


class CandidateChange(TypedDict, total=False):
    kind: str  # "cleanup" or "settings"
    point: str
    settings: str


class SweepCandidate(TypedDict, total=False):
    edits: List[str]
    changes: List[CandidateChange]
    kwargs: Dict[str, Any]
    description: str
    saving: int
    peak_reserved: int
    peak_allocated: int
    objective_value: int
    empty_cache_calls: int
    calls_per_step: Optional[float]
    price_seconds: float
    price_per_step_seconds: Optional[float]
    within_cap: bool
    pareto: bool
    oom: bool


class SweepReport(TypedDict, total=False):
    trace: str
    traces: List[str]
    objective: str
    minimize: str
    objective_point: Optional[str]
    baseline_peak_reserved: int
    baseline_objective: int
    candidates: List[SweepCandidate]
    pareto: List[SweepCandidate]
    evaluated: int
    replays: int  # runs replayed: candidates with the same run share one
    cancelled: bool


class GateCondition(TypedDict, total=False):
    kind: str  # "peak_reserved", "demand", "oom"
    verdict: str  # "pass", "fail", "unknown"
    reason: str
    missing: Optional[str]
    worst_trace: str
    traces: List[Dict[str, Any]]


# "pass" is a keyword in Python, so this one is written in TypedDict's functional form.
GateVerdict = TypedDict("GateVerdict", {
    "pass": bool,
    "undecided": bool,
    "reason": str,
    "missing": Optional[str],
    "worst_trace": str,
    "budget": Optional[int],
    "max_peak_reserved": int,
    "conditions": List[GateCondition],
    "traces": List[Dict[str, Any]],
}, total=False)


class CheckReport(TypedDict, total=False):
    trace: str
    exact: bool
    events_total: int
    events_compared: int
    first_divergence: Optional[Dict[str, Any]]
    layout_mismatches: List[Dict[str, str]]
    stats_mismatches: List[Dict[str, str]]
    notes: List[str]


class InfoReport(TypedDict, total=False):
    trace: str
    devices: List[Dict[str, Any]]
    anomalies: Dict[str, Any]


class ExportResult(TypedDict, total=False):
    trace: str
    out: Optional[str]
    csv: Optional[str]
    events: int
    segments: int
    rows: int


class ScaleTarget(TypedDict, total=False):
    target: Dict[str, int]
    predicted: RunFigures
    whatif: RunFigures
    capacity: Optional[int]
    needs: Dict[str, int]
    model_exact: bool
    model: Dict[str, Any]
    out: str
    check: Dict[str, Any]
