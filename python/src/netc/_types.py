"""The shapes of the JSON documents `netc` prints, as TypedDicts.

`netc report --format json` (spec/report.md) and `netc check --format json`
(spec/diagnostics.md). They follow the Rust structs field for field; a field the binary
adds later is still in the dict, only not in its type.
"""

from __future__ import annotations

from typing import List, Literal, Optional, TypedDict

Severity = Literal["error", "warning"]
"""A diagnostic's severity after levels were applied (an allowed one is not printed)."""


class Ledgers(TypedDict):
    """What is live at the peak, by ledger, in bytes."""

    weights: int
    buffers: int
    gradients: int
    optimizer: int
    activations: int
    workspace: int
    kv_cache: int
    runtime: int


class Breakdown(TypedDict):
    """The peak's bytes by what PyTorch holds them for."""

    parameters: int
    buffers: int
    inputs: int
    gradients: int
    optimizer_state: int
    activations: int
    backward_temporaries: int
    optimizer_temporaries: int
    workspace: int
    kv_cache: int


class Phase(TypedDict):
    """One phase of one step (forward, backward, optimizer): bytes at its start, peak, end."""

    step: int
    phase: str
    start: int
    peak: int
    end: int


class Line(TypedDict):
    """One source line of a scenario, over every time it ran."""

    file: str
    line: int
    source: str
    shape: str
    params: int
    macs: int
    macs_per_token: Optional[int]
    output_bytes: int
    activation_bytes: int
    workspace_bytes: int
    weight_bytes: int
    buffer_bytes: int
    gradient_bytes: int
    optimizer_bytes: int
    kv_cache_bytes: int
    instances: int


class Scenario(TypedDict):
    """One scenario: its model, its peak and where it happens, and its lines."""

    name: str
    kind: Literal["train", "infer"]
    file: str
    model: str
    batch: Optional[int]
    params: int
    trainable_params: int
    active_params: int
    macs: int
    device: str
    peak_bytes: int
    reserved_bytes: int
    runtime_bytes: int
    total_bytes: int
    budget_bytes: Optional[int]
    margin: float
    peak_step: int
    peak_phase: str
    peak_op: str
    peak_line: Optional[str]
    ledgers: Ledgers
    breakdown: Breakdown
    phases: List[Phase]
    kv_cache_bytes: int
    host_bytes: int
    host_budget_bytes: Optional[int]
    lines: List[Line]


class Report(TypedDict):
    """`netc report --format json`: schema `version` 2. `analyze` raises on errors, so every
    scenario here was simulated (no NOT-SIMULATED entry)."""

    version: int
    scenarios: List[Scenario]


class Position(TypedDict):
    """A 1-based line and column (columns count characters)."""

    line: int
    column: int


class Range(TypedDict):
    """Byte offsets into the file, end exclusive."""

    start: int
    end: int


class Label(TypedDict):
    """A span a diagnostic points at; the primary one is the diagnostic's own place."""

    file: str
    range: Range
    start: Position
    end: Position
    message: str
    primary: bool


class Diagnostic(TypedDict):
    """One diagnostic of `netc check --format json`."""

    code: str
    name: str
    severity: Severity
    message: str
    file: str
    start: Position
    end: Position
    labels: List[Label]
    notes: List[str]
    help: Optional[str]
