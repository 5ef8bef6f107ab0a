#!/usr/bin/env python3
"""Writes the decompression-bomb seeds of fuzz/corpus/image_decode (bomb_*):
tiny files whose headers claim huge images, one per container and header
field. tests/test_media_bombs.c decodes each and checks it is refused from
its header with almost no memory. Standard library only; the small images
they are patched from are the corpus's own seeds.

    python3 fuzz/make_image_bombs.py fuzz/corpus/image_decode
"""
import struct
import sys
import zlib
from pathlib import Path


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, bit_depth: int, color_type: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) +
            png_chunk(b"IDAT", zlib.compress(b"\0" * 8)) + png_chunk(b"IEND", b""))


def png_text_bomb(chunks: int, inflated: int) -> bytes:
    """A 1x1 PNG whose zTXt and compressed iTXt chunks each inflate to
    `inflated` zero bytes: work before the first pixel."""
    text = zlib.compress(b"\0" * inflated, 9)
    ztxt = png_chunk(b"zTXt", b"k\0\0" + text)
    itxt = png_chunk(b"iTXt", b"k\0\1\0\0\0" + text)
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + ztxt * chunks + itxt * chunks +
            png_chunk(b"IDAT", zlib.compress(b"\0\xff\0\0")) + png_chunk(b"IEND", b""))


def patch_jpeg_sof(data: bytes, width: int, height: int) -> bytes:
    """Sets the frame size in the first SOFn marker."""
    data = bytearray(data)
    i = 2
    while i + 4 <= len(data):
        assert data[i] == 0xFF, "not at a marker"
        marker, length = data[i + 1], struct.unpack(">H", data[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            data[i + 5:i + 9] = struct.pack(">HH", height, width)
            return bytes(data)
        i += 2 + length
    raise ValueError("no SOF marker")


def repeat_last_scan(data: bytes, copies: int) -> bytes:
    """A progressive JPEG with its last scan repeated: libjpeg absorbs every
    scan of a progressive file, each walking every block."""
    i, last = 2, None
    while data[i + 1] != 0xD9:
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        if data[i + 1] != 0xDA:
            i += 2 + length
            continue
        j = i + 2 + length  # entropy-coded data runs to the next marker
        while not (data[j] == 0xFF and data[j + 1] != 0 and not 0xD0 <= data[j + 1] <= 0xD7):
            j += 1
        last, i = data[i:j], j
    return data[:i] + last * copies + data[i:]


def riff(chunks: bytes) -> bytes:
    return b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WEBP" + chunks


def webp_chunk(kind: bytes, data: bytes) -> bytes:
    return kind + struct.pack("<I", len(data)) + data + (b"\0" if len(data) % 2 else b"")


def webp_chunks(data: bytes) -> dict:
    out, i = {}, 12
    while i + 8 <= len(data):
        kind, size = data[i:i + 4], struct.unpack("<I", data[i + 4:i + 8])[0]
        out[kind] = data[i + 8:i + 8 + size]
        i += 8 + size + (size & 1)
    return out


def vp8_with_size(vp8: bytes, width: int, height: int) -> bytes:
    """A VP8 key frame: 3-byte tag, start code, then 14-bit width and height."""
    return vp8[:6] + struct.pack("<HH", width & 0x3FFF, height & 0x3FFF) + vp8[10:]


def vp8l_with_size(vp8l: bytes, width: int, height: int) -> bytes:
    """VP8L: signature 0x2f, then 14 bits width-1, 14 bits height-1, ..."""
    bits = struct.unpack("<I", vp8l[1:5])[0]
    bits = (bits & ~0x0FFFFFFF) | ((width - 1) & 0x3FFF) | (((height - 1) & 0x3FFF) << 14)
    return vp8l[:1] + struct.pack("<I", bits) + vp8l[5:]


def vp8x(flags: int, width: int, height: int) -> bytes:
    return webp_chunk(b"VP8X", struct.pack("<I", flags) + (width - 1).to_bytes(3, "little") +
                      (height - 1).to_bytes(3, "little"))


def animated_webp(canvas: int, vp8l: bytes) -> bytes:
    """VP8X canvas x canvas with the animation flag, one ANMF frame holding
    the (small) lossless bitstream at the origin."""
    bits = struct.unpack("<I", vp8l[1:5])[0]
    width, height = (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    frame = (b"\0" * 6 + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little") +
             (100).to_bytes(3, "little") + b"\0" + webp_chunk(b"VP8L", vp8l))
    return riff(vp8x(0x12, canvas, canvas) + webp_chunk(b"ANIM", b"\0" * 6) + webp_chunk(b"ANMF", frame))


def gif(screen_width: int, screen_height: int, left: int, top: int, width: int, height: int) -> bytes:
    header = b"GIF89a" + struct.pack("<HHBBB", screen_width, screen_height, 0x80, 0, 0) + b"\0\0\0\xff\xff\xff"
    descriptor = b"," + struct.pack("<HHHHB", left, top, width, height, 0)
    return header + descriptor + b"\x02\x02\x44\x01\x00;"  # a 1-pixel LZW stream, then the trailer


def main() -> None:
    corpus = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "corpus" / "image_decode")
    baseline = (corpus / "baseline.jpg").read_bytes()
    progressive = (corpus / "progressive.jpg").read_bytes()
    lossy = webp_chunks((corpus / "lossy.webp").read_bytes())[b"VP8 "]
    lossless = webp_chunks((corpus / "palette_lossless.webp").read_bytes())[b"VP8L"]
    bombs = {
        # The 66-byte PNG: 2^31-1 square, 8-bit RGB.
        "bomb_png_ihdr_2147483647.png": png(2147483647, 2147483647, 8, 2),
        # Within the pixel limit (64 Mpx) but 16-bit RGBA rows of 512 MB.
        "bomb_png_rows_67108864x1.png": png(67108864, 1, 16, 6),
        # Metadata: text chunks inflating to 2 MB each (tests/test_media_bombs.c
        # builds a 16 MB one with 300 chunks of 8 MB).
        "bomb_png_text_chunks.png": png_text_bomb(16, 2 << 20),
        "bomb_jpeg_sof_65500.jpg": patch_jpeg_sof(baseline, 65500, 65500),
        "bomb_jpeg_progressive_sof_65500.jpg": patch_jpeg_sof(progressive, 65500, 65500),
        "bomb_jpeg_many_scans.jpg": repeat_last_scan(progressive, 300),
        "bomb_webp_vp8_16383.webp": riff(webp_chunk(b"VP8 ", vp8_with_size(lossy, 16383, 16383))),
        "bomb_webp_vp8l_16384.webp": riff(webp_chunk(b"VP8L", vp8l_with_size(lossless, 16384, 16384))),
        "bomb_webp_vp8x_16383.webp": riff(vp8x(0, 16383, 16383) +
                                          webp_chunk(b"VP8 ", vp8_with_size(lossy, 16383, 16383))),
        "bomb_webp_vp8x_animated_60000.webp": animated_webp(60000, lossless),
        "bomb_gif_screen_65535.gif": gif(65535, 65535, 0, 0, 1, 1),
        "bomb_gif_frame_65535.gif": gif(1, 1, 65535, 65535, 65535, 65535),
    }
    for name, data in bombs.items():
        (corpus / name).write_bytes(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
