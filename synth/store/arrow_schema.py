"""Map pydantic records to Arrow schemas and rows, and back.

Typed columns (strings, numbers, lists, nested records) stay typed so SQL over Parquet is natural;
free-form dicts become JSON strings, because rows from different recipes carry different keys and
Parquet files of one table must share a schema across versions.
"""

import json
import types
import typing
from datetime import datetime
from functools import cache
from typing import Any, Literal, TypeVar, Union

import pyarrow as pa
from pydantic import BaseModel

_SCALARS: dict[type, pa.DataType] = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
    datetime: pa.timestamp("us", tz="UTC"),
}


def _strip_optional(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(members) == 1:
            return _strip_optional(members[0])
        raise TypeError(f"unions other than Optional are not storable: {annotation}")
    if origin is typing.Annotated:
        return _strip_optional(typing.get_args(annotation)[0])
    return annotation


def _is_json(annotation: Any) -> bool:
    annotation = _strip_optional(annotation)
    return annotation is Any or annotation is dict or typing.get_origin(annotation) is dict


def arrow_type(annotation: Any) -> pa.DataType:
    """Arrow type of one field annotation."""
    annotation = _strip_optional(annotation)
    if _is_json(annotation):
        return pa.string()
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return pa.string()
    if origin is list:
        (inner,) = typing.get_args(annotation)
        return pa.list_(arrow_type(inner))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pa.struct(_fields(annotation))
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    raise TypeError(f"no Arrow type for {annotation!r}")


def _fields(model: type[BaseModel]) -> list[pa.Field]:
    return [pa.field(name, arrow_type(info.annotation)) for name, info in model.model_fields.items()]


@cache
def arrow_schema(model: type[BaseModel], extra: tuple[tuple[str, pa.DataType], ...] = ()) -> pa.Schema:
    """Schema of a table of `model` records, with `extra` columns (e.g. dataset, version) first."""
    return pa.schema([pa.field(name, dtype) for name, dtype in extra] + _fields(model))


# A "plan" says, per field, how a dumped value becomes an Arrow value and back: JSON fields are
# (de)serialized, nested records recurse, everything else passes through. Plans are computed once
# per model, because walking type annotations per row was the publish bottleneck.
_JSON, _MODEL, _MODEL_LIST, _JSON_LIST = "json", "model", "model_list", "json_list"


@cache
def _plan(model: type[BaseModel]) -> tuple[tuple[str, str, Any], ...]:
    steps = []
    for name, info in model.model_fields.items():
        annotation = _strip_optional(info.annotation)
        if _is_json(annotation):
            steps.append((name, _JSON, None))
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            steps.append((name, _MODEL, annotation))
        elif typing.get_origin(annotation) is list:
            (inner,) = typing.get_args(annotation)
            inner = _strip_optional(inner)
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                steps.append((name, _MODEL_LIST, inner))
            elif _is_json(inner):
                steps.append((name, _JSON_LIST, None))
    return tuple(steps)


def json_columns(model: type[BaseModel]) -> list[str]:
    """The top-level columns `model`'s rows store as JSON text (free-form dicts, and lists of them)."""
    return [name for name, kind, _ in _plan(model) if kind in (_JSON, _JSON_LIST)]


def _encode_dumped(model: type[BaseModel], row: dict[str, Any]) -> dict[str, Any]:
    for name, kind, inner in _plan(model):
        value = row.get(name)
        if value is None:
            continue
        if kind == _JSON:
            row[name] = json.dumps(value, ensure_ascii=False, sort_keys=True)
        elif kind == _MODEL:
            _encode_dumped(inner, value)
        elif kind == _MODEL_LIST:
            for element in value:
                _encode_dumped(inner, element)
        else:
            row[name] = [json.dumps(element, ensure_ascii=False, sort_keys=True) for element in value]
    return row


def to_row(record: BaseModel) -> dict[str, Any]:
    """One record as a dict of Arrow-ready values (JSON fields encoded, nested records as dicts)."""
    return _encode_dumped(type(record), record.model_dump())


def _decode_row(model: type[BaseModel], row: dict[str, Any]) -> dict[str, Any]:
    fields = model.model_fields
    values = {name: value for name, value in row.items() if name in fields and value is not None}
    for name, kind, inner in _plan(model):
        value = values.get(name)
        if value is None:
            continue
        if kind == _JSON:
            values[name] = json.loads(value)
        elif kind == _MODEL:
            values[name] = _decode_row(inner, value)
        elif kind == _MODEL_LIST:
            values[name] = [_decode_row(inner, element) for element in value]
        else:
            values[name] = [json.loads(element) for element in value]
    return values


M = TypeVar("M", bound=BaseModel)


def from_row(model: type[M], row: dict[str, Any]) -> M:
    """Rebuild a validated record from a stored row; columns the model lacks are ignored."""
    return model.model_validate(_decode_row(model, row))
