#!/usr/bin/env python3
"""Cuts the vendored fonts from Debian's Noto packages (see README.md).

Run from this folder with fonttools installed (`pip install fonttools`):
    python3 cut.py
It reads /usr/share/fonts (Debian bookworm: fonts-noto-core 20201225,
fonts-noto-cjk 20220127) and writes the .ttf/.otf files and cjk-chars.txt
here. The output is deterministic for the same inputs.
"""
import subprocess

CORE = "/usr/share/fonts/truetype/noto"
CJK = "/usr/share/fonts/opentype/noto"


def double_byte(codec):
    """Every character of a 94x94 EUC double-byte set (rows 0xA1..0xFE)."""
    chars = set()
    for hi in range(0xA1, 0xFF):
        for lo in range(0xA1, 0xFF):
            try:
                chars.update(bytes([hi, lo]).decode(codec))
            except UnicodeDecodeError:
                pass
    return chars


def cjk_chars():
    # GB 2312 (simplified Chinese), JIS X 0208 (Japanese), KS X 1001
    # (Korean): hanzi/kanji, kana, hangul syllables, CJK punctuation and
    # full-width forms. Latin, Greek and Cyrillic in those sets are left
    # to Noto Sans, which draws them proportionally.
    chars = double_byte("gb2312") | double_byte("euc_jp") | double_byte("euc_kr")
    keep = {c for c in chars if ord(c) >= 0x2E80}
    # Whole blocks a label may meet even outside the three standards.
    for lo, hi in [(0x3000, 0x303F), (0x3040, 0x30FF), (0x3130, 0x318F),
                   (0x31F0, 0x31FF), (0xFF00, 0xFFEF)]:
        keep.update(chr(u) for u in range(lo, hi + 1))
    return sorted(keep)


def pyftsubset(src, out, *args):
    subprocess.run(
        ["pyftsubset", src, f"--output-file={out}", "--no-hinting",
         "--name-IDs=*", "--name-legacy", "--notdef-outline",
         *args],
        check=True,
    )


# Noto Sans: Latin (with Extended-A/B, Additional: Vietnamese), Greek,
# Cyrillic, combining marks, general punctuation, currency, letterlike
# symbols, arrows, dotted circle (shapers show lone marks on it), and the
# replacement character.
LATIN = ("U+0000-024F,U+0250-02FF,U+0300-036F,U+0370-03FF,U+0400-052F,"
         "U+1C80-1C8F,U+1E00-1EFF,U+1F00-1FFF,U+2000-206F,U+20A0-20CF,"
         "U+2100-214F,U+2190-21FF,U+25CC,U+2C60-2C7F,U+2DE0-2DFF,"
         "U+A640-A69F,U+A720-A7FF,U+FB00-FB06,U+FEFF,U+FFFD")
for weight in ["Regular", "Bold"]:
    pyftsubset(f"{CORE}/NotoSans-{weight}.ttf", f"NotoSans-{weight}.ttf",
               f"--unicodes={LATIN}", "--layout-features=*")
    # Hebrew and Arabic: every character the fonts have.
    pyftsubset(f"{CORE}/NotoSansHebrew-{weight}.ttf",
               f"NotoSansHebrew-{weight}.ttf", "--unicodes=*",
               "--layout-features=*")
    pyftsubset(f"{CORE}/NotoSansArabic-{weight}.ttf",
               f"NotoSansArabic-{weight}.ttf", "--unicodes=*",
               "--layout-features=*")

chars = cjk_chars()
with open("cjk-chars.txt", "w", encoding="utf-8") as f:
    for i in range(0, len(chars), 64):
        f.write("".join(chars[i:i + 64]) + "\n")
for weight in ["Regular", "Bold"]:
    # Face 2 of the collection: Noto Sans CJK SC (simplified Chinese glyph
    # forms; the JP/KR faces map the same characters).
    pyftsubset(f"{CJK}/NotoSansCJK-{weight}.ttc", f"NotoSansCJKsc-{weight}.otf",
               "--font-number=2", "--text-file=cjk-chars.txt",
               # No shaping is needed for these scripts: without the
               # substitution features (regional, vertical, ruby forms) the
               # glyph closure stays at one glyph per character. Vertical
               # metrics are dropped too: labels are written horizontally.
               "--layout-features=", "--drop-tables+=vhea,vmtx,VORG,BASE")
