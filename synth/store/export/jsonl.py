"""Full records as JSON Lines: every field of every item, privileged information included."""

from collections.abc import Iterator

from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.sink import check_output, write_rows
from synth.store.reader import iter_records


def export(request: ExportRequest, table: str = "items") -> ExportResult:
    check_output(request.out, request.force, (".jsonl",))

    def rows() -> Iterator[dict]:
        for record in iter_records(
            request.settings, request.version, table, request.predicate("id" if table == "items" else "item_id")
        ):
            yield record.model_dump(mode="json")

    return ExportResult(request.out, write_rows(rows(), None, request.out))
