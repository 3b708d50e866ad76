"""The backup file: gzip-compressed JSON lines, self-describing and checked before any use.

    line 1   the header: {"format": "digest-bot-backup", "version": 1, "bot": "0.1.0",
             "created": ISO time, "prefix": REDIS_PREFIX, "data_version": 1, "keys": N,
             "sha256": hex digest of every line after this one}
    line 2…  one key each: {"k": name after the prefix, "t": type, "ttl": remaining ms or -1,
             "v": value}

Values: a string's bytes are a JSON string when they are UTF-8, else {"b64": …}; a hash is
[[field, value], …]; a set or a list [item, …]; a sorted set [[member, score], …]; a stream
[[id, [[field, value], …]], …] — each field, member and item encoded as a string is.

`read` checks everything before a single key is written: that it is gzip, that its first line is
this format's header, the format version (a newer one is refused, never guessed at), the checksum
(a truncated or edited file fails it), the count, and every record's shape. Any failure is one
sentence (ArchiveError).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..core.models import UsageError
from ..i18n import phrase

FORMAT = "digest-bot-backup"
FORMAT_VERSION = 1
TYPES = ("string", "hash", "set", "zset", "list", "stream")
GZIP_MAGIC = b"\x1f\x8b"

Item = tuple[str, str, int, Any]  # (key after the prefix, type, ttl ms or -1, value as Store.read_keys gives it)


class ArchiveError(UsageError):
    """The file is not a backup this bot can restore (said in one sentence, exit 2)."""


@dataclass(frozen=True)
class Archive:
    header: dict[str, Any]
    items: list[Item]

    @property
    def prefix(self) -> str:
        return str(self.header["prefix"])

    @property
    def data_version(self) -> int:
        return int(self.header["data_version"])


# --- writing ---------------------------------------------------------------------------------------


def _bytes_out(b: bytes | str) -> Any:
    if isinstance(b, str):
        return b
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(b).decode("ascii")}


def _value_out(kind: str, value: Any) -> Any:
    if kind == "string":
        return _bytes_out(value)
    if kind == "hash":
        return sorted([_bytes_out(f), _bytes_out(v)] for f, v in value.items())
    if kind == "set":
        return sorted((_bytes_out(m) for m in value), key=json.dumps)
    if kind == "zset":
        return [[_bytes_out(m), float(s)] for m, s in value]
    if kind == "list":
        return [_bytes_out(v) for v in value]
    return [[_bytes_out(i), sorted([_bytes_out(f), _bytes_out(v)] for f, v in fields.items())] for i, fields in value]


def encode(items: list[Item], *, prefix: str, data_version: int, bot_version: str, created: datetime) -> bytes:
    """The whole file, compressed."""
    lines = [
        json.dumps({"k": k, "t": t, "ttl": ttl, "v": _value_out(t, v)}, ensure_ascii=False, separators=(",", ":"))
        for k, t, ttl, v in sorted(items, key=lambda i: i[0])
    ]
    body = "".join(line + "\n" for line in lines).encode("utf-8")
    header = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "bot": bot_version,
        "created": created.astimezone(UTC).isoformat(timespec="seconds"),
        "prefix": prefix,
        "data_version": data_version,
        "keys": len(lines),
        "sha256": hashlib.sha256(body).hexdigest(),
    }
    head = (json.dumps(header, separators=(",", ":")) + "\n").encode("utf-8")
    return gzip.compress(head + body, compresslevel=6, mtime=0)


# --- reading ---------------------------------------------------------------------------------------


def read(raw: bytes, name: str) -> Archive:
    """The archive in `raw` (the file `name`), fully checked; ArchiveError otherwise."""
    if not raw.startswith(GZIP_MAGIC):
        raise ArchiveError(phrase("backup.not_a_backup", path=name))
    try:
        plain = gzip.decompress(raw)
    except (EOFError, OSError, zlib.error):
        raise ArchiveError(phrase("backup.damaged", path=name)) from None
    head, newline, body = plain.partition(b"\n")
    header = _header(head, name) if newline else None
    if header is None:
        raise ArchiveError(phrase("backup.not_a_backup", path=name))
    if not isinstance(header.get("version"), int) or header["version"] > FORMAT_VERSION:
        raise ArchiveError(
            phrase("backup.format_too_new", path=name, found=header.get("version"), known=FORMAT_VERSION)
        )
    fields = {"bot": str, "created": str, "prefix": str, "data_version": int, "keys": int, "sha256": str}
    if any(not isinstance(header.get(f), t) for f, t in fields.items()):
        raise ArchiveError(phrase("backup.damaged", path=name))
    if hashlib.sha256(body).hexdigest() != header["sha256"]:
        raise ArchiveError(phrase("backup.checksum", path=name))
    try:
        lines = body.decode("utf-8").split("\n")[:-1] if body else []
    except UnicodeDecodeError:
        raise ArchiveError(phrase("backup.damaged", path=name)) from None
    if len(lines) != header["keys"]:
        raise ArchiveError(phrase("backup.damaged", path=name))
    items: list[Item] = []
    for number, line in enumerate(lines, 2):
        try:
            items.append(_record(json.loads(line)))
        except (ValueError, TypeError, KeyError, AttributeError):
            raise ArchiveError(phrase("backup.bad_record", path=name, line=number)) from None
    return Archive(header, items)


def _header(head: bytes, name: str) -> dict[str, Any] | None:
    try:
        header = json.loads(head)
    except ValueError:  # UnicodeDecodeError included
        return None
    return header if isinstance(header, dict) and header.get("format") == FORMAT else None


def _bytes_in(v: Any) -> bytes:
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, dict) and set(v) == {"b64"} and isinstance(v["b64"], str):
        return base64.b64decode(v["b64"], validate=True)
    raise ValueError("not an encoded string")


def _pairs(v: Any) -> list[tuple[bytes, bytes]]:
    if not isinstance(v, list) or not all(isinstance(p, list) and len(p) == 2 for p in v):
        raise ValueError("not a list of pairs")
    return [(_bytes_in(a), _bytes_in(b)) for a, b in v]


def _record(rec: Any) -> Item:
    if not isinstance(rec, dict) or set(rec) != {"k", "t", "ttl", "v"}:
        raise ValueError("not a record")
    key, kind, ttl, v = rec["k"], rec["t"], rec["ttl"], rec["v"]
    if not isinstance(key, str) or not key or kind not in TYPES or not isinstance(ttl, int) or isinstance(ttl, bool):
        raise ValueError("not a record")
    value: Any
    if kind == "string":
        value = _bytes_in(v)
    elif kind == "hash":
        value = dict(_pairs(v))
    elif kind in ("set", "list"):
        if not isinstance(v, list):
            raise ValueError("not a list")
        value = [_bytes_in(m) for m in v]
    elif kind == "zset":
        if not isinstance(v, list) or not all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[1], (int, float)) for p in v
        ):
            raise ValueError("not a sorted set")
        value = [(_bytes_in(m), float(s)) for m, s in v]
    else:
        if not isinstance(v, list) or not all(isinstance(e, list) and len(e) == 2 for e in v):
            raise ValueError("not a stream")
        value = [(_bytes_in(i), dict(_pairs(f))) for i, f in v]
    if kind != "string" and not value:
        raise ValueError("an empty collection")  # Redis holds no empty hash, set, list or stream
    return key, kind, ttl, value
