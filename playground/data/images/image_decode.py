"""Records to pixels with OpenCV: RGB HxWx3 uint8 arrays, or HxW gray arrays when one channel is wanted.

OpenCV decodes to BGR; we ask it for RGB directly (IMREAD_COLOR_RGB) and reverse the channels of Caffe's raw
BGR pixels, so every image leaves this module in RGB order. Grayscale sources become three equal channels
when three are wanted, and colour sources are converted to gray when one is wanted.
"""
from __future__ import annotations

import cv2
import numpy as np

from playground.data.records.record_format import ENCODED, RAW_CHW_BGR, RAW_HWC, ImageRecord, RecordError


def decode_pixels(record: ImageRecord, channels: int) -> np.ndarray:
    """The record's image as uint8 pixels: HxWx3 RGB when `channels` is 3, HxW gray when it is 1.

    Raises RecordError when the payload is not a decodable image.
    """
    if record.encoding == ENCODED:
        return _decode_file(record.payload, channels)
    if record.encoding == RAW_HWC:
        pixels = np.frombuffer(record.payload, np.uint8).reshape(record.height, record.width, record.channels)
    elif record.encoding == RAW_CHW_BGR:
        chw = np.frombuffer(record.payload, np.uint8).reshape(record.channels, record.height, record.width)
        pixels = chw.transpose(1, 2, 0)[:, :, ::-1]   # BGR -> RGB (a single gray channel is unchanged)
    else:
        raise RecordError(f"unknown pixel encoding {record.encoding}")
    return convert_channels(np.ascontiguousarray(pixels), channels)


def convert_channels(pixels: np.ndarray, channels: int) -> np.ndarray:
    """HxWxC (C in 1, 3, 4; RGB order) or HxW pixels as `channels` 3 (RGB) or 1 (HxW gray)."""
    if pixels.ndim == 3 and pixels.shape[2] == 1:
        pixels = pixels[:, :, 0]
    have = 1 if pixels.ndim == 2 else pixels.shape[2]
    if have not in (1, 3, 4):
        raise RecordError(f"images with {have} channels are not supported (1, 3 or 4)")
    if channels == 3:
        if have == 1:
            return cv2.cvtColor(pixels, cv2.COLOR_GRAY2RGB)
        return pixels if have == 3 else cv2.cvtColor(pixels, cv2.COLOR_RGBA2RGB)
    if have == 1:
        return pixels
    return cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY if have == 3 else cv2.COLOR_RGBA2GRAY)


def _decode_file(payload: bytes, channels: int) -> np.ndarray:
    flag = cv2.IMREAD_COLOR_RGB if channels == 3 else cv2.IMREAD_GRAYSCALE
    try:
        pixels = cv2.imdecode(np.frombuffer(payload, np.uint8), flag) if payload else None
    except cv2.error:
        pixels = None
    if pixels is None:
        raise RecordError(f"OpenCV could not decode the {len(payload)}-byte image (not a JPEG, PNG or other "
                          "supported image file, or truncated)")
    return pixels
