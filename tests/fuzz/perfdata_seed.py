#!/usr/bin/env python3
"""perfdata_seed.py IN OUT [NRECORDS] - a small perf.data for the fuzz corpus.

Keeps IN's header, attributes and sample ids, its first NRECORDS samples
(default 120) and four records of each other type and, of its features, the tracing data (only the
sched, irq and raw_syscalls formats, no ftrace formats, kallsyms or printk
formats) and the CPU count: a real layout of a few KiB instead of the
hundreds perf writes (mostly /proc/kallsyms).  Layout per
tools/perf/Documentation/perf.data-file-format.txt; little-endian only.
"""
import struct
import sys

FEAT_TRACING_DATA, FEAT_NRCPUS = 1, 7
KEEP_SYSTEMS = (b"sched", b"irq", b"raw_syscalls")


def minify_tracing(t):
    pos = 10
    end = t.index(b"\0", pos)
    out = bytearray(t[:end + 1 + 2 + 4])  # magic, version, endian, long, page
    pos = end + 1 + 2 + 4
    for name in (b"header_page\0", b"header_event\0"):
        assert t[pos:pos + len(name)] == name
        (n,) = struct.unpack_from("<Q", t, pos + len(name))
        out += t[pos:pos + len(name) + 8 + n]
        pos += len(name) + 8 + n
    (nft,) = struct.unpack_from("<I", t, pos)
    pos += 4
    for _ in range(nft):
        (n,) = struct.unpack_from("<Q", t, pos)
        pos += 8 + n
    out += struct.pack("<I", 0)  # no ftrace formats
    (nsys,) = struct.unpack_from("<I", t, pos)
    pos += 4
    systems = []
    for _ in range(nsys):
        end = t.index(b"\0", pos)
        name = t[pos:end]
        pos = end + 1
        (nev,) = struct.unpack_from("<I", t, pos)
        pos += 4
        evs = []
        for _ in range(nev):
            (n,) = struct.unpack_from("<Q", t, pos)
            evs.append(t[pos + 8:pos + 8 + n])
            pos += 8 + n
        if name in KEEP_SYSTEMS:
            systems.append((name, evs))
    out += struct.pack("<I", len(systems))
    for name, evs in systems:
        out += name + b"\0" + struct.pack("<I", len(evs))
        for e in evs:
            out += struct.pack("<Q", len(e)) + e
    out += struct.pack("<I", 0)  # kallsyms
    out += struct.pack("<I", 0)  # printk formats
    return bytes(out)


def main():
    src = open(sys.argv[1], "rb").read()
    nrec = int(sys.argv[3]) if len(sys.argv) > 3 else 120
    assert src[:8] == b"PERFILE2"
    hsize, attr_size, aoff, asize, doff, dsize = struct.unpack_from("<QQQQQQ", src, 8)
    feats = struct.unpack_from("<4Q", src, 72)
    bits = [b for b in range(256) if feats[b // 64] >> (b % 64) & 1]
    table = doff + dsize
    sec = {b: struct.unpack_from("<QQ", src, table + 16 * i) for i, b in enumerate(bits)}
    # attributes with their id arrays, rewritten to follow the header
    attrs, ids = [], []
    for i in range(asize // attr_size):
        a = src[aoff + i * attr_size:aoff + (i + 1) * attr_size]
        ioff, isz = struct.unpack_from("<QQ", a, attr_size - 16)
        attrs.append(a[:attr_size - 16])
        ids.append(src[ioff:ioff + isz])
    # the first NRECORDS samples, a few records of every other type
    data, pos, seen = bytearray(), doff, {}
    while pos + 8 <= doff + dsize:
        (rtype,) = struct.unpack_from("<I", src, pos)
        (size,) = struct.unpack_from("<H", src, pos + 6)
        if size < 8:
            break
        seen[rtype] = seen.get(rtype, 0) + 1
        if seen[rtype] <= (nrec if rtype == 9 else 4):
            data += src[pos:pos + size]
        pos += size
    tracing = minify_tracing(src[sec[FEAT_TRACING_DATA][0]:][:sec[FEAT_TRACING_DATA][1]])
    nrcpus = src[sec[FEAT_NRCPUS][0]:][:sec[FEAT_NRCPUS][1]] if FEAT_NRCPUS in sec else b""

    out = bytearray(b"\0" * 104)
    id_off = []
    for blob in ids:
        id_off.append((len(out), len(blob)))
        out += blob
    new_aoff = len(out)
    for a, (o, n) in zip(attrs, id_off):
        out += a + struct.pack("<QQ", o, n)
    new_doff = len(out)
    out += data
    keep = [FEAT_TRACING_DATA] + ([FEAT_NRCPUS] if nrcpus else [])
    blobs = {FEAT_TRACING_DATA: tracing, FEAT_NRCPUS: nrcpus}
    table = len(out)
    out += b"\0" * (16 * len(keep))
    for i, b in enumerate(keep):
        struct.pack_into("<QQ", out, table + 16 * i, len(out), len(blobs[b]))
        out += blobs[b]
    bitmap = [0, 0, 0, 0]
    for b in keep:
        bitmap[b // 64] |= 1 << (b % 64)
    struct.pack_into("<8sQQQQQQQQ4Q", out, 0, b"PERFILE2", 104, attr_size,
                     new_aoff, len(attrs) * attr_size, new_doff, len(data), 0, 0, *bitmap)
    open(sys.argv[2], "wb").write(out)


main()
