"""Read a ``driftline scan`` result (json or jsonl) back into verdicts, for the reports that take a
scan result where they take a store (``driftline seeds``): both give the same verdicts."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model import MeasureResult, Verdict
from ..store.codec import verdict_from_dict
from .common import DRIFTLINE_KEY, MEASURES_KEY, SUMMARY_KEY


def _verdict(entry: Mapping[str, Any]) -> Verdict | None:
    block = entry.get(DRIFTLINE_KEY)
    if not isinstance(block, Mapping):
        return None
    measures = {
        str(name): MeasureResult(str(name), m.get("comparison score"), m.get("topic status", "n/a"), m.get("threshold"))
        for name, m in (entry.get(MEASURES_KEY) or {}).items() if isinstance(m, Mapping)
    }
    return dataclasses.replace(verdict_from_dict({**block, "measures": {}}), measures=measures)


def read_result(path: Path) -> Iterator[Verdict]:
    """The verdicts of a scan result file, json (OTMT schema + driftline keys) or jsonl."""
    try:
        with path.open(encoding="utf-8") as fh:
            head = fh.read(1 << 16)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc}", reason="unreadable_input") from exc
    first_line = head.lstrip().split("\n", 1)[0]
    is_jsonl = first_line.startswith("{") and first_line.rstrip().endswith("}") and "\n" in head.lstrip()
    if is_jsonl:
        try:
            json.loads(first_line)
        except ValueError:
            is_jsonl = False
    if is_jsonl:
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    v = _verdict(json.loads(line))
                except ValueError as exc:
                    raise InputError(f"{path}:{n}: not a driftline jsonl record: {exc}", reason="bad_result") from exc
                if v is not None:
                    yield v
        return
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(f"{path}: not a driftline scan result (json or jsonl): {exc}", reason="bad_result") from exc
    if not isinstance(doc, Mapping):
        raise InputError(f"{path}: not a driftline scan result (json or jsonl)", reason="bad_result")
    for timemap in doc.values():
        if not isinstance(timemap, Mapping):
            continue
        for key, entry in timemap.items():
            if key == SUMMARY_KEY or not isinstance(entry, Mapping):
                continue
            v = _verdict(entry)
            if v is not None:
                yield v
