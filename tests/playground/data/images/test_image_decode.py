"""Records to RGB or gray pixels (playground/data/images/image_decode.py)."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from playground.data.images.image_decode import decode_pixels
from playground.data.records.record_format import ENCODED, RAW_CHW_BGR, RAW_HWC, ImageRecord, RecordError

RED_BGR = np.zeros((4, 6, 3), np.uint8)
RED_BGR[:, :, 2] = 255


def png(image: np.ndarray) -> bytes:
    return cv2.imencode(".png", image)[1].tobytes()


def test_encoded_images_come_out_rgb():
    pixels = decode_pixels(ImageRecord(label=0, payload=png(RED_BGR)), channels=3)
    assert pixels.shape == (4, 6, 3) and pixels[0, 0].tolist() == [255, 0, 0]


def test_caffe_raw_bgr_chw_pixels_come_out_rgb_hwc():
    chw = np.ascontiguousarray(RED_BGR.transpose(2, 0, 1)).tobytes()
    record = ImageRecord(label=0, payload=chw, encoding=RAW_CHW_BGR, height=4, width=6, channels=3)
    pixels = decode_pixels(record, channels=3)
    assert pixels.shape == (4, 6, 3) and pixels[1, 2].tolist() == [255, 0, 0]


def test_gray_becomes_three_equal_channels_and_colour_becomes_gray():
    gray = np.arange(24, dtype=np.uint8).reshape(4, 6)
    three = decode_pixels(ImageRecord(label=0, payload=png(gray)), channels=3)
    assert three.shape == (4, 6, 3) and np.array_equal(three[:, :, 1], gray) and np.array_equal(three[:, :, 0], gray)
    raw = ImageRecord(label=0, payload=gray.tobytes(), encoding=RAW_HWC, height=4, width=6, channels=1)
    assert decode_pixels(raw, channels=3).shape == (4, 6, 3)
    one = decode_pixels(ImageRecord(label=0, payload=png(RED_BGR)), channels=1)
    assert one.shape == (4, 6) and one[0, 0] == 76          # 0.299 x 255: the luma of pure red


@pytest.mark.parametrize("payload", [b"", b"\xff\xd8\xff\xe0 not really a jpeg", b"\x89PNG\r\n\x1a\n" + b"\x00" * 20])
def test_undecodable_payloads_raise_record_error(payload):
    with pytest.raises(RecordError, match="OpenCV could not decode"):
        decode_pixels(ImageRecord(label=0, payload=payload, encoding=ENCODED), channels=3)
