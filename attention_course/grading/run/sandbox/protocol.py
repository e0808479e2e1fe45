"""The wire format between the batch grader and its worker processes.

A frame is `MAGIC, header length, header JSON, blob length, blob`, where the
blob is an uncompressed `.npz` of plain numeric arrays. Values are sent as
small JSON skeletons ({"t": "array", "k": "a0"}, {"t": "tuple", ...}) whose
arrays live in the blob, and read back with `allow_pickle=False`: only
numbers, booleans and short strings ever cross from a worker to the grader.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile

import numpy as np

from ...checks.engine.calls import CallOutcome, Observation, Opaque
from ...checks.engine.cases import Case
from ...checks.engine.run import FollowUp

MAGIC = b"ACG1"
MAX_HEADER = 4 << 20
"""Largest header (JSON) accepted from a worker, in bytes."""
MAX_BLOB = 256 << 20
"""Largest array payload accepted from a worker, in bytes (after decompression)."""
CHANNEL_LOST = 86
"""The worker's exit status when it cannot write to its result channel (the notebook closed the descriptor)."""

_savez = np.savez  # bound now: a notebook that replaces np.savez cannot reach the channel
_dumps = json.dumps
_pack = struct.pack


class ProtocolError(ValueError):
    """A frame from a worker that is not what the grader sent it to produce."""


def encode(header: dict, arrays: dict[str, np.ndarray] | None = None) -> bytes:
    """One frame holding `header` (JSON-able) and `arrays`."""
    head = _dumps(header).encode()
    blob = b""
    if arrays:
        buf = io.BytesIO()
        _savez(buf, **arrays)
        blob = buf.getvalue()
    return MAGIC + _pack(">I", len(head)) + head + _pack(">Q", len(blob)) + blob


def decode(buffer: bytes | bytearray, start: int = 0) -> tuple[dict, dict[str, np.ndarray], int] | None:
    """Read the frame at `start`: (header, arrays, end) or None if it is not complete yet.

    Raises ProtocolError for anything malformed.
    """
    if len(buffer) - start < len(MAGIC) + 4:
        return None
    if bytes(buffer[start:start + 4]) != MAGIC:
        raise ProtocolError("a frame does not start with the grader's marker")
    (n_head,) = struct.unpack(">I", bytes(buffer[start + 4:start + 8]))
    if n_head > MAX_HEADER:
        raise ProtocolError(f"a header of {n_head} bytes is too large")
    head_end = start + 8 + n_head
    if len(buffer) < head_end + 8:
        return None
    (n_blob,) = struct.unpack(">Q", bytes(buffer[head_end:head_end + 8]))
    if n_blob > MAX_BLOB:
        raise ProtocolError(f"a payload of {n_blob} bytes is too large")
    end = head_end + 8 + n_blob
    if len(buffer) < end:
        return None
    try:
        header = json.loads(bytes(buffer[start + 8:head_end]))
    except (ValueError, UnicodeDecodeError) as err:
        raise ProtocolError(f"a header is not valid JSON: {err}") from None
    if not isinstance(header, dict):
        raise ProtocolError("a header is not a JSON object")
    arrays = _load_arrays(bytes(buffer[head_end + 8:end])) if n_blob else {}
    return header, arrays, end


def _load_arrays(blob: bytes) -> dict[str, np.ndarray]:
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            if sum(info.file_size for info in zf.infolist()) > MAX_BLOB:
                raise ProtocolError("the payload expands to too many bytes")
        with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except ProtocolError:
        raise
    except Exception as err:  # a corrupt zip, an object array, a truncated file...
        raise ProtocolError(f"the payload is not a plain array file: {type(err).__name__}: {err}") from None
    for name, arr in arrays.items():
        if arr.dtype.kind not in "biuf":
            raise ProtocolError(f"array {name!r} has dtype {arr.dtype}, not numbers")
    return arrays


def pack_value(value, arrays: dict[str, np.ndarray]):
    """The JSON skeleton of a plain value; its arrays are added to `arrays`."""
    if value is None:
        return {"t": "none"}
    if isinstance(value, Opaque):
        return {"t": "opaque", "d": str(value.description)[:200]}
    if isinstance(value, np.ndarray):
        key = f"a{len(arrays)}"
        arrays[key] = value
        return {"t": "array", "k": key}
    if isinstance(value, tuple):
        return {"t": "tuple", "items": [pack_value(v, arrays) for v in value]}
    if isinstance(value, (bool, int, float, str)):
        return {"t": "py", "v": value}
    raise TypeError(f"cannot send a {type(value).__name__}")


def unpack_value(skeleton, arrays: dict[str, np.ndarray], depth: int = 0):
    """Inverse of `pack_value`, validating everything a worker could have forged."""
    if not isinstance(skeleton, dict) or depth > 3:
        raise ProtocolError("a value description is malformed")
    kind = skeleton.get("t")
    if kind == "none":
        return None
    if kind == "opaque":
        return Opaque(str(skeleton.get("d", "something"))[:200])
    if kind == "array":
        key = skeleton.get("k")
        if key not in arrays:
            raise ProtocolError(f"a value refers to a missing array {key!r}")
        return arrays[key]
    if kind == "tuple":
        items = skeleton.get("items")
        if not isinstance(items, list) or len(items) > 16:
            raise ProtocolError("a tuple description is malformed")
        return tuple(unpack_value(v, arrays, depth + 1) for v in items)
    if kind == "py":
        value = skeleton.get("v")
        if isinstance(value, (bool, int, float)) or (isinstance(value, str) and len(value) <= 200):
            return value
    raise ProtocolError(f"unknown value kind {kind!r}")


def pack_observation(obs: Observation, arrays: dict[str, np.ndarray]) -> dict:
    """An Observation as JSON plus arrays."""
    return {
        "status": obs.status,
        "error": obs.error[:2000],
        "seconds": float(obs.seconds),
        "peak_bytes": obs.peak_bytes,
        "overflowed": bool(obs.overflowed),
        "value": pack_value(obs.value, arrays),
        "args_after": [pack_value(a, arrays) for a in obs.args_after],
    }


_OUTCOMES = {str(o) for o in CallOutcome}


def unpack_observation(data, arrays: dict[str, np.ndarray]) -> Observation:
    """Rebuild an Observation from a worker's frame, rejecting anything odd."""
    if not isinstance(data, dict) or not isinstance(data.get("status"), str) or data["status"] not in _OUTCOMES:
        raise ProtocolError("an observation is malformed")
    peak = data.get("peak_bytes")
    if peak is not None and (not isinstance(peak, int) or isinstance(peak, bool) or peak < 0):
        raise ProtocolError("an observation's peak memory is not a count of bytes")
    seconds = data.get("seconds", 0.0)
    after = data.get("args_after", [])
    if not isinstance(after, list) or len(after) > 16:
        raise ProtocolError("an observation's arguments are malformed")
    overflowed = data.get("overflowed", False)
    if not isinstance(overflowed, bool):
        raise ProtocolError("an observation's overflow flag is not true or false")
    return Observation(
        status=CallOutcome(data["status"]),
        value=unpack_value(data.get("value", {"t": "none"}), arrays),
        error=str(data.get("error", ""))[:2000],
        args_after=tuple(unpack_value(a, arrays) for a in after),
        seconds=float(seconds) if isinstance(seconds, (int, float)) else 0.0,
        peak_bytes=peak,
        overflowed=overflowed,
    )


def pack_follow_up(found: FollowUp, call_ids, arrays: dict[str, np.ndarray]) -> dict:
    """A check's `run.FollowUp` as JSON plus arrays, its case indices given as the ids of the calls that made them
    (`call_ids[i]`, a list or a dict, made case i)."""
    return {
        "helper": found.helper,
        "swapped": [[call_ids[i], pack_observation(obs, arrays)] for i, obs in found.swapped.items()],
        "smallest": None if found.smallest is None else [pack_value(a, arrays) for a in found.smallest.args],
        "observation": None if found.observation is None else pack_observation(found.observation, arrays),
        "cut_from": None if found.cut_from is None else call_ids[found.cut_from],
    }


def unpack_follow_up(data, arrays: dict[str, np.ndarray]) -> FollowUp:
    """Inverse of `pack_follow_up`, its case indices left as call ids, the smaller input as its arguments alone (a
    `Case` with no label, to be rebuilt from the grader's own case); ProtocolError for anything malformed."""
    if not isinstance(data, dict):
        raise ProtocolError("a follow-up is not an object")
    helper, swapped, smallest = data.get("helper"), data.get("swapped", []), data.get("smallest")
    if helper is not None and not (isinstance(helper, str) and len(helper) <= 100):
        raise ProtocolError("a follow-up's helper is not a name")
    if not isinstance(swapped, list) or len(swapped) > 10_000:
        raise ProtocolError("a follow-up's swapped calls are malformed")
    calls_: dict[int, Observation] = {}
    for item in swapped:
        if not (isinstance(item, list) and len(item) == 2 and type(item[0]) is int):
            raise ProtocolError("a follow-up's swapped call is malformed")
        calls_[item[0]] = unpack_observation(item[1], arrays)
    if smallest is not None and not (isinstance(smallest, list) and len(smallest) <= 16):
        raise ProtocolError("a follow-up's smaller input is malformed")
    cut_from, observation = data.get("cut_from"), data.get("observation")
    if cut_from is not None and type(cut_from) is not int:
        raise ProtocolError("a follow-up's case is not a call id")
    return FollowUp(
        helper=helper, swapped=calls_,
        smallest=None if smallest is None else Case("", tuple(unpack_value(a, arrays) for a in smallest)),
        observation=None if observation is None else unpack_observation(observation, arrays),
        cut_from=cut_from,
    )


def case_fields(case: Case) -> dict:
    """What the worker needs of a case besides its arguments (which its call carries) to judge a call as a guide."""
    return {"label": case.label[:200], "hidden": case.hidden, "saturated": case.saturated,
            "precision": None if case.precision is None else [float(x) for x in case.precision]}
