"""docs/json-schema.md lists exactly the fields `airtrace analyze --json` writes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from airtrace.cli import main
from conftest import CORPUS, ROOT


def documented_fields() -> set[str]:
    text = (ROOT / "docs" / "json-schema.md").read_text()
    return set(re.findall(r"^\| `([a-z0-9_]+)` \|", text, flags=re.M))


def written_fields(obj: Any, out: set[str]) -> set[str]:
    """Every key, at any depth; a finding's `details` map is free-form (docs/diagnosis.md
    lists its keys per kind), so its keys are not fields of the schema."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.add(k)
            if k != "details":
                written_fields(v, out)
    elif isinstance(obj, list):
        for v in obj:
            written_fields(v, out)
    return out


def test_every_field_is_documented_and_every_documented_field_written(capsys) -> None:
    files = [CORPUS / "zeek_retransmit-fast009.pcap", CORPUS / "ppa_tcp_zerowindowrecovery.pcapng"]
    assert main(["analyze", "--json", *map(str, files)]) == 0
    report = json.loads(capsys.readouterr().out)
    written = written_fields(report, set())
    documented = documented_fields()
    assert written - documented == set(), "written but not documented"
    assert documented - written == set(), "documented but not written"
