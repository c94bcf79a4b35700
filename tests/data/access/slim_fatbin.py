#!/usr/bin/env python3
"""slim_fatbin.py IN OUT ARCH: copy a fatbin keeping only the entries of
one SASS arch (and no PTX), so that a real capture's code image (PyTorch's
fatbins hold six archs) fits in the repository as a test fixture. Layout:
code/fatbin.c (header {u32 magic, u16 version, u16 header size, u64 bytes},
entries {u16 kind, u16, u32 header size, u64 payload size, ..., u32 arch at
+28}); several fatbins may follow each other."""
import struct
import sys


def slim(data, arch):
    out, pos = b"", 0
    while pos + 16 <= len(data):
        magic, ver, hs, nbytes = struct.unpack_from("<IHHQ", data, pos)
        if magic != 0xBA55ED50:
            break
        e, end, kept = pos + hs, pos + hs + nbytes, b""
        while e + 32 <= end:
            kind, _, hsz, psz = struct.unpack_from("<HHIQ", data, e)
            if struct.unpack_from("<I", data, e + 28)[0] == arch and kind == 2:  # 2: ELF
                kept += data[e:e + hsz + psz]
            e += hsz + psz
        if kept:
            out += struct.pack("<IHHQ", magic, ver, hs, len(kept)) + data[pos + 16:pos + hs] + kept
        pos = end
    return out


if __name__ == "__main__":
    src, dst, arch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(src, "rb") as f:
        data = slim(f.read(), arch)
    if not data:
        sys.exit("%s: no sm_%d entry" % (src, arch))
    with open(dst, "wb") as f:
        f.write(data)
