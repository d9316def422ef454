"""Crops, resizing, mirror and colour noise, random only through (seed, pass, index) (playground/data/images/augment.py)."""
from __future__ import annotations

import numpy as np

from playground.data.images.augment import AugmentSpec, augment, inception_box, resize_shorter, sample_rng
from playground.data.images.color_augment import add_lighting, jitter_colors

IMAGE = np.random.default_rng(0).integers(0, 256, (40, 60, 3), dtype=np.uint8)
FULL = AugmentSpec(is_train=True, loadsize=32, imsize=24, scale_jitter_type=1, mirror=True, color_jitter=True,
                   color_lighting=True)


def test_the_same_seed_pass_and_index_give_the_same_image():
    for spec in (FULL, AugmentSpec(is_train=True, loadsize=32, imsize=24)):
        first = augment(IMAGE, spec, sample_rng(3, 1, 17))
        again = augment(IMAGE.copy(), spec, sample_rng(3, 1, 17))
        assert first.shape == (24, 24, 3) and first.dtype == np.uint8 and first.flags.c_contiguous
        assert np.array_equal(first, again)


def test_another_pass_index_or_seed_gives_another_image():
    base = augment(IMAGE, FULL, sample_rng(3, 1, 17))
    for other in ((3, 2, 17), (3, 1, 18), (4, 1, 17)):
        assert not np.array_equal(base, augment(IMAGE, FULL, sample_rng(*other)))
    passes = {augment(IMAGE, FULL, sample_rng(0, p, 5)).tobytes() for p in range(10)}
    assert len(passes) == 10


def test_test_time_is_a_shorter_side_resize_and_a_centre_crop():
    spec = AugmentSpec(is_train=False, loadsize=20, imsize=16)
    out = augment(IMAGE, spec, None)
    expected = resize_shorter(IMAGE, 20)[2:18, 7:23]      # 40x60 -> 20x30, centre 16x16
    assert out.shape == (16, 16, 3) and np.array_equal(out, expected)
    gray = augment(IMAGE[:, :, 0], spec, None)
    assert gray.shape == (16, 16)


def test_inception_crops_cover_8_to_100_percent_with_aspect_3_4_to_4_3():
    rng = np.random.default_rng(1)
    for _ in range(300):
        y, x, h, w = inception_box(40, 60, rng)
        assert 0 <= y and y + h <= 40 and 0 <= x and x + w <= 60
        assert 0.07 <= h * w / 2400 <= 1.0
    # an image too narrow for any draw falls back to its largest centred crop within the aspect range
    assert inception_box(1000, 10, np.random.default_rng(0)) == (493, 0, 13, 10)


def test_mirror_flips_about_half_of_the_images():
    spec = AugmentSpec(is_train=True, loadsize=40, imsize=40, mirror=True)
    square = np.ascontiguousarray(IMAGE[:, :40])          # loadsize = imsize = its size: only the mirror is random
    flipped = sum(np.array_equal(augment(square, spec, sample_rng(0, 0, i)), square[:, ::-1]) for i in range(200))
    assert 70 < flipped < 130


def test_colour_noise_changes_pixels_but_keeps_uint8_shape_for_colour_and_gray():
    for image in (IMAGE, IMAGE[:, :, 1].copy()):
        jittered = jitter_colors(image, np.random.default_rng(2))
        lit = add_lighting(image, np.random.default_rng(2), std=1.0)
        for out in (jittered, lit):
            assert out.shape == image.shape and out.dtype == np.uint8 and not np.array_equal(out, image)
