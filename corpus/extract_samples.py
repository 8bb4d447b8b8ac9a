#!/usr/bin/env python3
"""Rebuild corpus/sample/*.txt from the Debian packages they were cut from.

Every sample file is real text shipped in a Debian 12 (bookworm) package; this
script records exactly how it was cut, so the sample can be audited and
regenerated.  It needs `apt-get download` (a configured apt, network to the
Debian archive) and `dpkg-deb`; nothing is installed on the system.

    python3 corpus/extract_samples.py                  # writes corpus/sample/
    python3 corpus/extract_samples.py --out /tmp/s     # somewhere else
    python3 corpus/extract_samples.py --any-version    # if a pinned version
                                                       # left the archive

See corpus/SOURCES.md for packages, paths and licences.
"""
import argparse
import glob
import os
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))

# package -> version the committed sample was cut from
PACKAGES = {
    "debian-history": "2.28",
    "gnome-user-docs": "43.0-2",
    "libreoffice-l10n-ar": "4:7.4.7-1+deb12u14",
    "libreoffice-l10n-he": "4:7.4.7-1+deb12u14",
    "libreoffice-l10n-hi": "4:7.4.7-1+deb12u14",
    "libreoffice-l10n-th": "4:7.4.7-1+deb12u14",
    "fortunes-zh": "2.98",
    "unicode-data": "15.0.0-1",
}

DH = "usr/share/doc/debian-history"
GH = "usr/share/help"
LO = "usr/lib/libreoffice/program/resource"

# Unicode blocks used to keep only translated strings (untranslated ones fall
# back to English in these packages).
RANGES = {
    "arabic": [(0x0600, 0x06FF), (0x0750, 0x077F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF)],
    "hebrew": [(0x0590, 0x05FF), (0xFB1D, 0xFB4F)],
    "devanagari": [(0x0900, 0x097F), (0xA8E0, 0xA8FF)],
    "thai": [(0x0E00, 0x0E7F)],
    "greek": [(0x0370, 0x03FF), (0x1F00, 0x1FFF)],
}


# ---------------------------------------------------------------- helpers ---

def fetch(debdir, unpack, any_version):
    os.makedirs(debdir, exist_ok=True)
    roots = {}
    for pkg, ver in PACKAGES.items():
        spec = pkg if any_version else f"{pkg}={ver}"
        have = [f for f in glob.glob(os.path.join(debdir, f"{pkg}_*.deb"))]
        if not any_version:
            want = ver.split(":", 1)[-1]
            have = [f for f in have if os.path.basename(f).split("_")[1]
                    .replace("%3a", ":").split(":", 1)[-1] == want]
        if not have:
            subprocess.run(["apt-get", "download", spec], cwd=debdir, check=True)
            have = glob.glob(os.path.join(debdir, f"{pkg}_*.deb"))
        deb = sorted(have)[-1]
        real = subprocess.run(["dpkg-deb", "-f", deb, "Version"], check=True,
                              capture_output=True, text=True).stdout.strip()
        if real != ver:
            print(f"note: {pkg} is {real}, sample was cut from {ver}", file=sys.stderr)
        root = os.path.join(unpack, pkg)
        if not os.path.isdir(root):
            os.makedirs(unpack, exist_ok=True)
            subprocess.run(["dpkg-deb", "-x", deb, root + ".part"], check=True)
            os.rename(root + ".part", root)
        roots[pkg] = root
    return roots


def read_text(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".gz"):
        import gzip
        data = gzip.decompress(data)
    return data.decode("utf-8")  # strict: every source must be valid UTF-8


def paragraphs(text):
    """Split on blank lines; strip trailing spaces; drop empty blocks."""
    out = []
    for block in re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n")):
        lines = [l.rstrip() for l in block.split("\n")]
        while lines and not lines[0]:
            lines.pop(0)
        while lines and not lines[-1]:
            lines.pop()
        if lines:
            out.append("\n".join(lines))
    return out


def take(paras, limit):
    """Leading paragraphs whose UTF-8 size (joined by blank lines) <= limit."""
    out, size = [], 0
    for p in paras:
        n = len(p.encode()) + 2
        if size + n > limit:
            break
        out.append(p)
        size += n
    return out


def frac(s, ranges):
    letters = [c for c in s if c.isalpha()]
    if not letters:
        return 0.0
    hit = sum(any(lo <= ord(c) <= hi for lo, hi in ranges) for c in letters)
    return hit / len(letters)


def group(lines, n):
    return ["\n".join(lines[i:i + n]) for i in range(0, len(lines), n)]


def history_body(roots, lang):
    """Project history text from Chapter 1 on (skips title page and TOC);
    paragraphs identical to the English original are dropped."""
    text = read_text(os.path.join(roots["debian-history"], DH,
                                  f"docs/project-history.{lang}.txt.gz"))
    m = re.search(r"^(?:\S+\s1\.\s|1장\.\s)", text, re.M)
    paras = paragraphs(text[m.start():])
    if lang != "en":  # drop paragraphs left untranslated (verbatim English)
        english = set(history_body(roots, "en"))
        paras = [p for p in paras if p not in english]
    return paras


def dedication(roots, name):
    return paragraphs(read_text(os.path.join(roots["debian-history"], DH,
                                             "dedication", name)))


def mo_strings(path):
    """msgstr strings of a GNU .mo catalogue, in catalogue order."""
    with open(path, "rb") as f:
        d = f.read()
    e = "<" if struct.unpack("<I", d[:4])[0] == 0x950412DE else ">"
    _, n, _, tab = struct.unpack(e + "4I", d[4:20])
    out = []
    for i in range(n):
        ln, off = struct.unpack(e + "2I", d[tab + 8 * i: tab + 8 * i + 8])
        out.extend(d[off:off + ln].decode("utf-8").split("\0"))  # plural forms
    return out


def lo_sentences(roots, lang, catalogs, ranges, limit):
    """Translated LibreOffice UI sentences: one-line msgstrs of >= 60 chars,
    >= 80% of letters in the target script, de-duplicated, 5 per paragraph."""
    seen, lines = set(), []
    for cat in catalogs:
        path = os.path.join(roots[f"libreoffice-l10n-{lang}"], LO, lang,
                            "LC_MESSAGES", cat)
        for s in mo_strings(path):
            s = s.strip()
            if (len(s) >= 60 and "\n" not in s and s not in seen
                    and frac(s, ranges) >= 0.8):
                seen.add(s)
                lines.append(s)
    return take(group(lines, 5), limit)


def mallard(roots, lang, ranges, limit, minlen=40):
    """Translated paragraphs (<p>, <title>, <desc>; >= 40 chars, >= 60% of
    letters in the target script) of GNOME Help pages, 3 per paragraph."""
    ns = "{http://projectmallard.org/1.0/}"
    keep = {ns + "p", ns + "title", ns + "desc"}
    d = os.path.join(roots["gnome-user-docs"], GH, lang, "gnome-help")
    out = []
    for page in sorted(glob.glob(os.path.join(d, "*.page"))):
        root = ET.parse(page).getroot()
        texts = []
        for el in root.iter():
            if el.tag in keep:
                t = re.sub(r"\s+", " ", "".join(el.itertext())).strip()
                if len(t) >= minlen and frac(t, ranges) >= 0.6:
                    texts.append(t)
        out.extend(group(texts, 3))
    return take(out, limit)


def tang(roots, limit):
    """Tang poems: ANSI colour escapes removed, '%' separators dropped."""
    text = read_text(os.path.join(roots["fortunes-zh"], "usr/share/games/fortunes/tang300"))
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    return take(paragraphs(re.sub(r"^%$", "", text, flags=re.M)), limit)


def emoji(roots):
    """Fully-qualified emoji of emoji-test.txt, one paragraph per subgroup:
    '# subgroup' line, then the emoji separated by spaces, 16 a line."""
    path = os.path.join(roots["unicode-data"], "usr/share/unicode/emoji/emoji-test.txt")
    out, sub, cur = [], None, []

    def flush():
        if sub and cur:
            out.append("\n".join(["# " + sub] + [" ".join(cur[i:i + 16])
                                                 for i in range(0, len(cur), 16)]))
    lines = read_text(path).split("\n")
    # the Unicode licence asks for its notice and a note of modification
    out.append("\n".join(lines[2:5] + [
        "# Modified: the fully-qualified emoji of emoji-test.txt (Unicode 15.0, Debian",
        "# unicode-data 15.0.0-1), grouped by subgroup; see corpus/SOURCES.md."]))
    for line in lines:
        if line.startswith("# subgroup:"):
            flush()
            sub, cur = line.split(":", 1)[1].strip(), []
        elif "; fully-qualified" in line:
            cur.append(re.match(r".*?# (\S+) E\d", line).group(1))
    flush()
    return out


# ---------------------------------------------------------------- samples ---

def build(roots):
    s = {}
    s["ascii"] = take(history_body(roots, "en"), 50000)
    latin = []
    for lang in ["de", "es", "fr", "it", "lt", "pt"]:
        latin += take(history_body(roots, lang), 5000)
    latin += dedication(roots, "dedication-5.0.vi.txt")
    latin += dedication(roots, "dedication-9.0.cs.txt")
    latin += dedication(roots, "dedication-9.0.ro.txt")
    s["latin"] = latin
    s["cyrillic"] = take(history_body(roots, "ru"), 36000)
    s["greek"] = mallard(roots, "el", RANGES["greek"], 36000)
    s["arabic"] = (lo_sentences(roots, "ar", ["cui.mo", "sc.mo", "sw.mo"], RANGES["arabic"], 26000)
                   + mallard(roots, "fa", RANGES["arabic"], 8000))
    s["hebrew"] = lo_sentences(roots, "he", ["cui.mo", "sc.mo", "sfx.mo", "sw.mo", "dba.mo"],
                               RANGES["hebrew"], 34000)
    s["devanagari"] = (lo_sentences(roots, "hi", ["sc.mo", "dba.mo", "sca.mo", "sw.mo"],
                                    RANGES["devanagari"], 24000)
                       + mallard(roots, "mr", RANGES["devanagari"], 10000))
    s["thai"] = (dedication(roots, "dedication-9.0.th.txt")
                 + lo_sentences(roots, "th", ["cui.mo", "sc.mo"], RANGES["thai"], 30000))
    s["cjk"] = take(history_body(roots, "ja"), 24000) + tang(roots, 12000)
    s["korean"] = take(history_body(roots, "ko"), 36000)
    s["emoji"] = emoji(roots)
    # mixed: round-robin one paragraph from each script in turn
    order = ["latin", "cyrillic", "greek", "arabic", "hebrew", "devanagari",
             "cjk", "korean", "thai", "emoji", "ascii"]
    mixed, size, i = [], 0, 0
    pos = dict.fromkeys(order, 0)
    while size < 190000:
        k = order[i % len(order)]
        i += 1
        if pos[k] >= len(s[k]):
            if all(pos[o] >= len(s[o]) for o in order):
                break
            continue
        p = s[k][pos[k]]
        pos[k] += 1
        mixed.append(p)
        size += len(p.encode()) + 2
    s["mixed"] = mixed
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "sample"))
    ap.add_argument("--work", default="/tmp/gutf8-corpus-src",
                    help="where .debs are downloaded and unpacked")
    ap.add_argument("--any-version", action="store_true",
                    help="take the archive's current versions instead of the pinned ones")
    a = ap.parse_args()
    roots = fetch(os.path.join(a.work, "debs"), os.path.join(a.work, "x"), a.any_version)
    os.makedirs(a.out, exist_ok=True)
    for name, paras in build(roots).items():
        data = ("\n\n".join(paras) + "\n").encode("utf-8")
        data.decode("utf-8")
        with open(os.path.join(a.out, name + ".txt"), "wb") as f:
            f.write(data)
        print(f"{len(data):8d}  {name}.txt  ({len(paras)} paragraphs)")


if __name__ == "__main__":
    main()
