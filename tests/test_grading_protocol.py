"""Tests for attention_course/grading/run/sandbox/protocol.py: only plain data crosses back."""

import io
import json
import struct

import numpy as np
import pytest

from attention_course.grading.checks.engine.calls import Observation, Opaque
from attention_course.grading.run.sandbox.protocol import (
    MAGIC,
    ProtocolError,
    decode,
    encode,
    pack_observation,
    pack_value,
    unpack_observation,
    unpack_value,
)


def test_round_trip_of_a_frame_with_arrays():
    arrays = {}
    skeleton = pack_value((np.arange(3.0), None, Opaque("a dict"), np.array([True])), arrays)
    frame = encode({"event": "x", "value": skeleton}, arrays)
    header, got, end = decode(frame + b"trailing", 0)
    assert end == len(frame) and header["event"] == "x"
    value = unpack_value(header["value"], got)
    np.testing.assert_array_equal(value[0], [0.0, 1.0, 2.0])
    assert value[1] is None and value[2] == Opaque("a dict") and value[3].dtype == bool


def test_incomplete_frames_wait_for_more():
    frame = encode({"event": "ready"})
    for cut in (0, 3, 9, len(frame) - 1):
        assert decode(frame[:cut]) is None
    assert decode(frame)[0] == {"event": "ready"}


def test_garbage_is_rejected():
    with pytest.raises(ProtocolError, match="marker"):
        decode(b"garbage!" * 4)
    with pytest.raises(ProtocolError, match="too large"):
        decode(MAGIC + struct.pack(">I", 1 << 30) + b"{}")
    bad_json = MAGIC + struct.pack(">I", 3) + b"{{{" + struct.pack(">Q", 0)
    with pytest.raises(ProtocolError, match="JSON"):
        decode(bad_json)


def test_object_arrays_and_pickles_never_load():
    buf = io.BytesIO()
    np.save(buf, np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    import zipfile

    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w") as zf:
        zf.writestr("a0.npy", buf.getvalue())
    head = json.dumps({"event": "result"}).encode()
    frame = MAGIC + struct.pack(">I", len(head)) + head + struct.pack(">Q", len(zbuf.getvalue())) + zbuf.getvalue()
    with pytest.raises(ProtocolError, match="not a plain array file"):
        decode(frame)


def test_observations_round_trip_and_forgeries_fail():
    arrays = {}
    obs = Observation("returned", value=np.ones(2), args_after=(np.zeros(2), None), seconds=0.5, peak_bytes=10)
    data = pack_observation(obs, arrays)
    back = unpack_observation(json.loads(json.dumps(data)), arrays)
    assert back.status == "returned" and back.peak_bytes == 10 and back.args_after[1] is None
    with pytest.raises(ProtocolError):
        unpack_observation({**data, "status": "passed"}, arrays)
    with pytest.raises(ProtocolError):
        unpack_observation({**data, "peak_bytes": -1}, arrays)
    overflowed = Observation("returned", value=np.zeros(2), overflowed=True)  # exp overflowed, the value still right
    assert unpack_observation(pack_observation(overflowed, arrays), arrays).overflowed
    assert not back.overflowed
    with pytest.raises(ProtocolError, match="overflow"):
        unpack_observation({**data, "overflowed": "yes"}, arrays)
    with pytest.raises(ProtocolError):
        unpack_value({"t": "array", "k": "missing"}, arrays)
    with pytest.raises(ProtocolError):
        unpack_value({"t": "code", "v": "import os"}, arrays)


def test_the_channel_takes_nothing_after_done_but_a_late_finding():
    from attention_course.grading.run.sandbox.channel import Reports
    from attention_course.grading.run.sandbox.protocol import encode

    reports = Reports(0, set(), [], 1.0, 1.0)
    reports.add(encode({"event": "ready"}) + encode({"event": "done"}) + encode({"event": "alert", "kind": "network",
                                                                                  "detail": "look up pypi.org"}))
    reports.parse()
    assert reports.finished and reports.unread == 0 and len(reports.alerts) == 1  # a thread of the notebook, watched
    reports.add(b"ACG1\x00")  # half a frame: the worker writes each of its frames whole
    reports.parse()
    assert reports.unread == 5
    reports.add(b"\x00\x00\x10" + b'{"event":"done"}' + bytes(8))
    with pytest.raises(ProtocolError, match="after the worker's last one"):
        reports.parse()
