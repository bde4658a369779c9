"""An export format written outside synth, as a user would add one: this module (its `export`)
and one `register_format` entry (in the test that uses it)."""

import csv

from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.sink import check_output
from synth.store.reader import iter_records


def export(request: ExportRequest) -> ExportResult:
    check_output(request.out, request.force, (".csv",))
    rows = 0
    with request.out.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "question", "answer", "difficulty"])
        for item in iter_records(request.settings, request.version, "items", request.where):
            writer.writerow([item.id, item.question, item.answer, item.difficulty])
            rows += 1
    return ExportResult(request.out, rows)
