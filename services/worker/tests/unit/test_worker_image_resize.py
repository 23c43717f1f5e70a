"""Resizing PNG, JPEG and WebP images generated here; undecodable and oversized input."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from jobs_sdk.errors import PermanentJobError
from jobs_worker.handlers.image_resize import resize_image

pytestmark = pytest.mark.unit


def make_image(fmt: str, size: tuple[int, int] = (64, 48), mode: str = "RGB") -> bytes:
    image = Image.new(mode, size, color=(200, 30, 30) if mode == "RGB" else 128)
    for x in range(size[0]):
        image.putpixel((x, x % size[1]), (0, 0, 255) if mode == "RGB" else 0)
    out = io.BytesIO()
    image.save(out, format=fmt)
    return out.getvalue()


def decode(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


@pytest.mark.parametrize(
    ("source", "expected"), [("PNG", "png"), ("JPEG", "jpeg"), ("WEBP", "webp")]
)
def test_resize_keeps_the_source_format(source: str, expected: str) -> None:
    resized = resize_image(
        make_image(source), width=20, height=10, output_format=None, max_pixels=10_000
    )
    assert (resized.format, resized.width, resized.height) == (expected, 20, 10)
    image = decode(resized.data)
    assert image.size == (20, 10)
    assert image.format == source


@pytest.mark.parametrize("target", ["png", "jpeg", "webp"])
def test_resize_converts_to_the_requested_format(target: str) -> None:
    source = make_image("PNG", mode="RGBA")
    resized = resize_image(source, width=32, height=32, output_format=target, max_pixels=10_000)
    image = decode(resized.data)
    assert image.format == target.upper()
    assert image.size == (32, 32)
    assert resized.extension == {"png": "png", "jpeg": "jpg", "webp": "webp"}[target]


def test_palette_image_upscales() -> None:
    source = make_image("PNG", mode="L")
    paletted = Image.open(io.BytesIO(source)).convert("P")
    out = io.BytesIO()
    paletted.save(out, format="PNG")
    resized = resize_image(
        out.getvalue(), width=128, height=96, output_format=None, max_pixels=100_000
    )
    assert decode(resized.data).size == (128, 96)


def test_garbage_after_a_png_signature_is_permanent() -> None:
    garbage = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    with pytest.raises(PermanentJobError) as caught:
        resize_image(garbage, width=10, height=10, output_format=None, max_pixels=10_000)
    assert caught.value.error_class == "ImageDecodeError"


def test_plain_garbage_is_permanent() -> None:
    with pytest.raises(PermanentJobError):
        resize_image(
            b"not an image at all", width=10, height=10, output_format="png", max_pixels=100
        )


def test_truncated_jpeg_is_permanent() -> None:
    data = make_image("JPEG", size=(200, 200))
    with pytest.raises(PermanentJobError):
        resize_image(
            data[: len(data) // 3], width=10, height=10, output_format=None, max_pixels=10**6
        )


def test_decompression_bomb_is_refused_before_decoding() -> None:
    bomb = io.BytesIO()
    Image.new("1", (3000, 3000)).save(bomb, format="PNG")
    assert len(bomb.getvalue()) < 10_000
    with pytest.raises(PermanentJobError) as caught:
        resize_image(bomb.getvalue(), width=10, height=10, output_format=None, max_pixels=1_000_000)
    assert caught.value.error_class == "DecompressionBombError"


def test_oversized_target_is_permanent() -> None:
    with pytest.raises(PermanentJobError) as caught:
        resize_image(
            make_image("PNG"), width=5000, height=5000, output_format=None, max_pixels=10**6
        )
    assert caught.value.error_class == "ImageTooLarge"
