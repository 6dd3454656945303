"""Durable images (MEM-OBJ-durable-images): ``llm/client.py``."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from systems.rsiagent.model.verifier import _merge_images
from systems.rsiagent.state import (
    Message,
)


def sniff_mime(data: bytes) -> str:
    """The image MIME type from magic bytes (PNG, JPEG, GIF, WebP); default ``image/png``."""
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "image/png"


def image_attachment(data: bytes) -> dict[str, str]:
    """One ``_rsiagent_images`` entry: the whole image, never resized or interpreted."""
    return {
        "mime_type": sniff_mime(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "data": base64.b64encode(data).decode("ascii"),
    }


def with_durable_images(message: Message, images: Sequence[bytes | dict[str, str]]) -> Message:
    """Keep the existing attachments, then add new ones deduplicated by sha256 (or ``(mime, data)``)."""
    new = [image_attachment(i) if isinstance(i, bytes) else i for i in images]
    merged = _merge_images(message, Message("user", "", images=tuple(new)))
    return Message(message.role, message.content, message.reasoning, merged)


def durable_user_message(text: str, images: Sequence[bytes] = ()) -> Message:
    """``durable_user_message``: a JSON-safe user message with its images stored in full."""
    return with_durable_images(Message("user", text), list(images))


def wire_message(message: Message) -> list[dict[str, Any]]:
    """``_wire_message``: one text part plus one data-URL image part per attachment."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    for att in message.images:
        parts.append(
            {"type": "image_url", "image_url": {"url": f"data:{att['mime_type']};base64,{att['data']}"}}
        )
    return parts


def agentic_image_bytes(att: Mapping[str, str]) -> bytes:
    """``_agentic_image_bytes``: strict base64 decode and sha256 check; raises ValueError."""
    try:
        data = base64.b64decode(att["data"], validate=True)
    except (ValueError, KeyError) as exc:
        raise ValueError(f"bad image attachment: {exc}") from exc
    if att.get("sha256") and hashlib.sha256(data).hexdigest() != att["sha256"]:
        raise ValueError("image attachment sha256 mismatch")
    return data


def scope_prior_curriculum_visuals(messages: Sequence[Message]) -> list[Message]:
    """At a Curriculum project boundary: strip pixels, leaving a note with the count and the sha list."""
    out = []
    for m in messages:
        if not m.images:
            out.append(m)
            continue
        shas = [a.get("sha256", "") for a in m.images]
        note = f"\n[{len(shas)} prior image(s) removed at the project boundary; sha256: {', '.join(shas)}]"
        out.append(Message(m.role, m.content + note, m.reasoning))
    return out
