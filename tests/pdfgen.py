"""Assemble small PDFs for tests: numbered objects, an xref table, a trailer.

One place for the file structure, so a test only writes the objects it
cares about (pages, content streams, fonts)."""

from __future__ import annotations


def assemble_pdf(objs: list[bytes]) -> bytes:
    """A PDF whose objects are ``objs`` (object 1 is the catalog), with a valid xref table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{off:010d} 00000 n \n".encode() for off in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
