"""A Hugging Face `datasets` folder (`save_to_disk`), for `datasets.load_from_disk(path)`.

Holds the items with their stored columns (free-form fields as JSON strings): the chosen held-out
split under its name, or with `--split all` each split under its own (train, validation, test), and
the version's dataset card as README.md (synth.store.card: lineage, difficulty, audits).
"""

import shutil

import pyarrow as pa

from synth.errors import OutputError
from synth.schemas import Item
from synth.splits import SPLITS, split_of
from synth.store.arrow_schema import json_columns
from synth.store.card import dataset_card
from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.sink import check_output
from synth.store.reader import open_reader


def export(request: ExportRequest) -> ExportResult:
    import datasets

    check_output(request.out, request.force)
    with open_reader(request.settings, request.version, "items", request.predicate()) as reader:
        table = reader.read_all()
    if request.split == "all":
        names = [split_of(item_id, request.fractions) for item_id in table.column("id").to_pylist()]
        dataset = datasets.DatasetDict(
            {
                split: datasets.Dataset(table.filter(pa.array([name == split for name in names])))
                for split in SPLITS
                if split in names
            }
        )
    else:
        dataset = datasets.DatasetDict({request.split: datasets.Dataset(table)})
    temporary = request.out.with_name(f".{request.out.name}.tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    try:
        dataset.save_to_disk(str(temporary))
        (temporary / "README.md").write_text(dataset_card(request.settings, request.version.ref))
        if request.out.is_dir():
            shutil.rmtree(request.out)
        elif request.out.exists():
            request.out.unlink()
        temporary.rename(request.out)
    except OSError as error:  # a full disk, a read-only folder: nothing half-written is left behind
        raise OutputError(
            f"cannot write --out {request.out}: {error.strerror or error}; choose a writable path with free space "
            "(nothing was written)"
        ) from None
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    notes = [f"load with datasets.load_from_disk({str(request.out)!r})"]
    if text := [name for name in json_columns(Item) if name in table.column_names]:
        notes.append(
            f"{', '.join(text)}: JSON text in every row (json.loads each value), because free-form keys differ from "
            "row to row and an Arrow column holds one type; the jsonl export writes the same values as objects"
        )
    return ExportResult(request.out, table.num_rows, notes)
