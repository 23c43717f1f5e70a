"""image_resize: decode with Pillow, resize (LANCZOS), encode, write an artifact file."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from PIL import Image, UnidentifiedImageError

from jobs_sdk.errors import PermanentJobError
from jobs_worker.adapters.artifacts import artifact_key, artifact_path, write_atomically
from jobs_worker.handlers.config import ImageConfig
from jobs_worker.handlers.payloads import ImageResizePayload
from jobs_worker.sdk import JobContext, handler

_PIL_FORMATS = {"png": "PNG", "jpeg": "JPEG", "webp": "WEBP"}
_EXTENSIONS = {"png": "png", "jpeg": "jpg", "webp": "webp"}


@dataclass(frozen=True)
class ResizedImage:
    data: bytes
    format: str
    width: int
    height: int
    source_width: int
    source_height: int
    source_format: str

    @property
    def extension(self) -> str:
        return _EXTENSIONS[self.format]


def _decode(data: bytes, max_pixels: int) -> Image.Image:
    try:
        image = Image.open(io.BytesIO(data))
        if image.width * image.height > max_pixels:
            raise PermanentJobError(
                f"image of {image.width}x{image.height} exceeds {max_pixels} pixels",
                error_class="DecompressionBombError",
            )
        image.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise PermanentJobError(str(exc), error_class="DecompressionBombError") from exc
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        raise PermanentJobError(
            f"image cannot be decoded: {exc}", error_class="ImageDecodeError"
        ) from exc
    return image


def resize_image(
    data: bytes, *, width: int, height: int, output_format: str | None, max_pixels: int
) -> ResizedImage:
    """Decode ``data``, resize to exactly ``width`` x ``height`` and encode as
    ``output_format`` (default: the source format). Undecodable input and images above
    ``max_pixels`` (source or target) are permanent errors."""
    if width * height > max_pixels:
        raise PermanentJobError(
            f"target {width}x{height} exceeds {max_pixels} pixels", error_class="ImageTooLarge"
        )
    image = _decode(data, max_pixels)
    source_width, source_height, source_format = image.width, image.height, image.format or "?"
    target = output_format or (image.format or "").lower()
    if target not in _PIL_FORMATS:
        raise PermanentJobError(
            f"unsupported output format {target!r}", error_class="UnsupportedFormat"
        )
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    if target == "jpeg" and image.mode in ("RGBA", "LA"):
        image = image.convert("RGB")
    resized = image.resize((width, height), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    resized.save(out, format=_PIL_FORMATS[target])
    return ResizedImage(
        data=out.getvalue(),
        format=target,
        width=width,
        height=height,
        source_width=source_width,
        source_height=source_height,
        source_format=source_format,
    )


@handler("image_resize", payload=ImageResizePayload, config=ImageConfig)
def run(ctx: JobContext, payload: ImageResizePayload) -> dict[str, Any]:
    """A sync handler: it runs in the worker's thread pool, its log lines reach the loop
    through the thread-safe logger."""
    config: ImageConfig = ctx.config
    resized = resize_image(
        payload.image_bytes(),
        width=payload.width,
        height=payload.height,
        output_format=payload.format,
        max_pixels=config.max_image_pixels,
    )
    path = artifact_path(config.artifacts_dir, ctx.job_id, ctx.attempt, resized.extension)
    ctx.log.info(
        "decoded %dx%d %s, resized to %dx%d %s",
        resized.source_width,
        resized.source_height,
        resized.source_format,
        resized.width,
        resized.height,
        resized.format,
    )
    artifact = write_atomically(path, resized.data)
    # The owner reads this line: the file's name, its full path in the worker's log only.
    ctx.log.info(
        "wrote %s (%d bytes)",
        artifact.path.name,
        artifact.bytes,
        extra={"action": "image_resized", "path": str(artifact.path)},
    )
    return {
        "artifact": artifact_key(ctx.job_id, ctx.attempt, resized.extension),
        "width": resized.width,
        "height": resized.height,
        "format": resized.format,
        "bytes": artifact.bytes,
        "sha256": artifact.sha256,
    }
