#!/usr/bin/env python3
"""Build large benchmark corpora from the bundled real-text sample (stdlib only).

  tile    SIZE bytes of valid UTF-8, made by tiling the paragraphs of sample
          text (corpus/sample/KIND.txt, or given files) in a seeded order.
  inject  copy a file, overwriting characters with ill-formed UTF-8 at a rate.
  build   the standard benchmark set (ascii, cjk, emoji, mixed and mixed with
          0.1%, 1%, 5% invalid) plus manifest.json with sizes and sha256.

Output is a pure function of the inputs, the size, the rate and --seed: the
same command writes the same bytes on any machine (the PRNG is Python's
Mersenne Twister, used only through random(), which is stable across versions).

Examples:
  python3 corpus/make_corpus.py tile --size 64M --kind cjk /tmp/cjk.txt
  python3 corpus/make_corpus.py tile --size 1G a.txt b.txt /tmp/ab.txt
  python3 corpus/make_corpus.py inject --rate 0.01 --seed 7 /tmp/cjk.txt /tmp/cjk-bad.txt
  python3 corpus/make_corpus.py build --size 256M      # -> corpus/generated/
"""
import argparse
import hashlib
import json
import math
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE_DIR = os.path.join(HERE, "sample")
BLOCK = 8 << 20  # I/O block size

# ---------------------------------------------------------------- common ---


def parse_size(s):
    """'4096', '64K', '256M', '4G', '1.5G' (binary units: K=1024)."""
    s = s.strip().upper().removesuffix("IB").removesuffix("B")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


def fmt_size(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def kinds_available():
    return sorted(f[:-4] for f in os.listdir(SAMPLE_DIR) if f.endswith(".txt"))


def rng_for(seed, *labels):
    # Seeding with a str hashes it with SHA-512: stable across runs, platforms
    # and PYTHONHASHSEED.
    return random.Random(":".join([str(seed)] + [str(x) for x in labels]))


def shuffle(rng, items):
    # Fisher-Yates on rng.random() only, so the order cannot change with the
    # Python version (random.shuffle's internals have changed before).
    for i in range(len(items) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        items[i], items[j] = items[j], items[i]


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(BLOCK)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


# ------------------------------------------------------------------ tile ---


def load_paragraphs(paths):
    """Paragraphs (split on blank lines) of the inputs, each ending '\\n\\n'.
    Inputs must be valid UTF-8; splitting on ASCII never cuts a sequence."""
    paras = []
    for p in paths:
        with open(p, "rb") as f:
            data = f.read()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            sys.exit(f"{p}: not valid UTF-8 ({e})")
        paras += [x.strip(b"\n") + b"\n\n" for x in data.split(b"\n\n") if x.strip(b"\n")]
    if not paras:
        sys.exit("no text in the inputs")
    return paras


def tile(inputs, out, size, seed=1, shuffled=True):
    """Write exactly `size` bytes of valid UTF-8 to `out`.

    The text is a sequence of rounds; each round is every input paragraph once,
    in an order shuffled per round from `seed` (or file order with
    shuffled=False).  The last round is cut at a character boundary at or
    before `size` and padded with ASCII spaces to exactly `size` bytes."""
    paras = load_paragraphs(inputs)
    rng = rng_for(seed, "tile")
    order = list(range(len(paras)))
    left = size
    with open(out, "wb", buffering=BLOCK) as f:
        while left > 0:
            if shuffled:
                shuffle(rng, order)
            chunk = b"".join([paras[i] for i in order])
            if len(chunk) <= left:
                f.write(chunk)
                left -= len(chunk)
                continue
            j = left
            while j > 0 and (chunk[j] & 0xC0) == 0x80:  # chunk[j]: first byte left out
                j -= 1
            f.write(chunk[:j])
            f.write(b" " * (left - j))
            left = 0
    return size


# ---------------------------------------------------------------- inject ---

# Error types: name -> (weight, patterns).  Each pattern overwrites whole
# characters at a character boundary (the rest of the overwritten span is
# padded with ASCII spaces), so the file keeps its size and every error is
# isolated: its U+FFFD count under the Unicode "maximal subpart" practice
# (Python's errors='replace', WHATWG decode) is that of the pattern alone.
ERROR_TYPES = {
    # stray continuation byte
    "stray": (20, [bytes([b]) for b in range(0x80, 0xC0)]),
    # bytes that never occur in UTF-8: C0, C1 and F5..FF
    "badbyte": (20, [bytes([b]) for b in (0xC0, 0xC1, *range(0xF5, 0x100))]),
    # multi-byte sequence without its last byte (taken from the text itself
    # when a multi-byte character is at hand, else one of these)
    "truncated": (25, [b"\xc3", b"\xce", b"\xd7", b"\xe2\x82", b"\xe4\xb8",
                       b"\xed\x9f", b"\xf0\x9f\x98", b"\xf0\x9f", b"\xf4\x8f\xbf"]),
    # overlong encodings of '/', NUL, U+07FF, U+FFFF
    "overlong": (10, [b"\xc0\xaf", b"\xe0\x80\xaf", b"\xf0\x80\x80\xaf", b"\xc0\x80",
                      b"\xe0\x9f\xbf", b"\xf0\x8f\xbf\xbf", b"\xc1\xbf"]),
    # UTF-16 surrogates encoded as UTF-8 (CESU-style)
    "surrogate": (15, [b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xed\xb0\x80", b"\xed\xaf\xbf"]),
    # code points above U+10FFFF
    "toolarge": (10, [b"\xf4\x90\x80\x80", b"\xf4\xbf\xbf\xbf", b"\xf5\x80\x80\x80",
                      b"\xf7\xbf\xbf\xbf"]),
}


def n_replacements(b):
    return b.decode("utf-8", errors="replace").count("\ufffd")


def char_len(lead):
    if lead < 0x80:
        return 1
    if lead >= 0xF0:
        return 4
    if lead >= 0xE0:
        return 3
    if lead >= 0xC0:
        return 2
    return 1


def inject(src, out, rate, seed=1, types=None, quiet=False):
    """Copy src to out with ill-formed sequences at `rate` errors per byte.

    Error starts are a Poisson process (exponential gaps, mean 1/rate bytes),
    moved forward to the next character boundary and kept at least one valid
    character apart.  Returns statistics, including the exact number of
    U+FFFD a maximal-subpart decoder produces for the injected errors."""
    if not 0 < rate < 0.5:
        sys.exit("--rate must be in (0, 0.5)")
    types = types or list(ERROR_TYPES)
    for t in types:
        if t not in ERROR_TYPES:
            sys.exit(f"unknown error type {t!r}; known: {', '.join(ERROR_TYPES)}")
    total_w = sum(ERROR_TYPES[t][0] for t in types)
    cum, acc = [], 0
    for t in types:
        acc += ERROR_TYPES[t][0]
        cum.append((acc / total_w, t))
    fffd = {t: [n_replacements(p) for p in ERROR_TYPES[t][1]] for t in types}
    trunc_fffd = 1

    rng = rng_for(seed, "inject", rate)
    rnd = rng.random
    log = math.log
    stats = {t: 0 for t in types}
    bad_bytes = 0
    replacements = 0
    size = os.path.getsize(src)
    done = 0          # bytes of src already written
    nxt = 0           # absolute offset of the next error start
    nxt += int(-log(1.0 - rnd()) / rate)
    buf = bytearray()
    t0 = time.time()
    with open(src, "rb") as fi, open(out, "wb", buffering=BLOCK) as fo:
        eof = False
        while True:
            if not eof:
                b = fi.read(BLOCK)
                if b:
                    buf += b
                else:
                    eof = True
            base = done               # absolute offset of buf[0]
            end = len(buf)
            limit = end if eof else end - 16   # keep a tail for errors spanning blocks
            p = nxt - base
            while p < limit:
                # next character boundary
                while p < end and (buf[p] & 0xC0) == 0x80:
                    p += 1
                if p >= limit:
                    break
                u = rnd()
                for c, t in cum:
                    if u < c:
                        break
                lead = buf[p]
                n0 = char_len(lead)
                if t == "truncated" and n0 > 1 and p + n0 <= end:
                    pat_len = n0 - 1        # drop the last byte of this character
                    q = p + n0
                    buf[q - 1] = 0x20
                    nrep = trunc_fffd
                else:
                    pats = ERROR_TYPES[t][1]
                    k = int(rnd() * len(pats))
                    pat = pats[k]
                    pat_len = len(pat)
                    q = p
                    while q < p + pat_len and q < end:   # whole characters covering the pattern
                        q += char_len(buf[q])
                    if q > end or q < p + pat_len:
                        break  # at EOF with no room: drop this error
                    buf[p:p + pat_len] = pat
                    for i in range(p + pat_len, q):
                        buf[i] = 0x20
                    nrep = fffd[t][k]
                stats[t] += 1
                bad_bytes += pat_len
                replacements += nrep
                # next error: exponential gap from this start, but at least one
                # byte past the overwritten span (q is a boundary or a space)
                gap = int(-log(1.0 - rnd()) / rate)
                p = max(p + gap, q + 1)
            nxt = base + p
            if eof:
                fo.write(buf)
                done += len(buf)
                buf = bytearray()
                break
            keep = min(p, end)      # bytes before p are final
            fo.write(buf[:keep])
            done += keep
            del buf[:keep]
            if not quiet and size > (256 << 20):
                print(f"\r  {done * 100 // max(size, 1)}%", end="", file=sys.stderr, flush=True)
    if not quiet and size > (256 << 20):
        print(f"\r  done in {time.time() - t0:.1f}s", file=sys.stderr)
    errors = sum(stats.values())
    return {
        "size": size,
        "rate": rate,
        "errors": errors,
        "errors_per_byte": errors / size if size else 0.0,
        "invalid_bytes": bad_bytes,
        "replacement_chars": replacements,
        "by_type": stats,
    }


# --------------------------------------------------------------- commands ---


def resolve_inputs(kind, inputs):
    if inputs and kind:
        sys.exit("give either --kind or INPUT files, not both")
    if inputs:
        return inputs
    kind = kind or "mixed"
    path = os.path.join(SAMPLE_DIR, kind + ".txt")
    if not os.path.exists(path):
        sys.exit(f"unknown kind {kind!r}; known: {', '.join(kinds_available())}")
    return [path]


def cmd_tile(a):
    if not a.paths:
        sys.exit("missing OUT")
    *inputs, out = a.paths
    inputs = resolve_inputs(a.kind, inputs)
    t0 = time.time()
    n = tile(inputs, out, parse_size(a.size), a.seed, not a.no_shuffle)
    dt = time.time() - t0
    shown = [os.path.relpath(i) if not os.path.relpath(i).startswith("..") else i
             for i in inputs]
    print(f"{out}: {n} bytes from {', '.join(shown)} "
          f"({dt:.1f}s, {n / max(dt, 1e-9) / 1e6:.0f} MB/s)", file=sys.stderr)


def cmd_inject(a):
    types = a.types.split(",") if a.types else None
    st = inject(a.input, a.output, a.rate, a.seed, types)
    print(json.dumps(st, indent=1))


def cmd_build(a):
    size = parse_size(a.size)
    os.makedirs(a.out_dir, exist_ok=True)
    man_path = os.path.join(a.out_dir, "manifest.json")
    try:
        with open(man_path) as f:
            old = {e["file"]: e for e in json.load(f)["files"]}
    except (OSError, ValueError, KeyError):
        old = {}
    kinds = a.kinds.split(",")
    rates = [float(r) for r in a.rates.split(",")]
    entries = []

    def fresh(name, params):
        e = old.get(name)
        path = os.path.join(a.out_dir, name)
        return (not a.force and e is not None and os.path.exists(path)
                and os.path.getsize(path) == size
                and {k: e.get(k) for k in params} == params)

    for kind in kinds:
        name = f"{kind}.txt"
        src = resolve_inputs(kind, [])[0]
        with open(src, "rb") as f:
            src_sha = hashlib.sha256(f.read()).hexdigest()
        params = {"kind": kind, "size": size, "seed": a.seed, "sample_sha256": src_sha}
        path = os.path.join(a.out_dir, name)
        if fresh(name, params):
            entries.append(old[name])
            continue
        print(f"tile   {name} ({fmt_size(size)})", file=sys.stderr)
        tile([src], path, size, a.seed)
        entries.append(dict(file=name, **params, valid=True, sha256=sha256_file(path)))
    base = {e["file"]: e for e in entries}
    for rate in rates:
        for kind in a.inject_kinds.split(","):
            src_name = f"{kind}.txt"
            if src_name not in base:
                sys.exit(f"--inject-kinds {kind} is not among --kinds")
            pct = f"{rate * 100:g}pct"
            name = f"{kind}-invalid-{pct}.txt"
            params = {"kind": kind, "size": size, "seed": a.seed, "rate": rate,
                      "source_sha256": base[src_name]["sha256"]}
            path = os.path.join(a.out_dir, name)
            if fresh(name, params):
                entries.append(old[name])
                continue
            print(f"inject {name} (rate {rate})", file=sys.stderr)
            st = inject(os.path.join(a.out_dir, src_name), path, rate, a.seed)
            entries.append(dict(file=name, **params, valid=False,
                                errors=st["errors"], invalid_bytes=st["invalid_bytes"],
                                replacement_chars=st["replacement_chars"],
                                by_type=st["by_type"], sha256=sha256_file(path)))
    with open(man_path, "w") as f:
        json.dump({"generator": "corpus/make_corpus.py", "files": entries}, f, indent=1)
        f.write("\n")
    for e in entries:
        extra = "" if e["valid"] else f"  errors={e['errors']} U+FFFD={e['replacement_chars']}"
        print(f"{e['sha256']}  {os.path.join(a.out_dir, e['file'])}  {e['size']}{extra}")
    print(f"manifest: {man_path}", file=sys.stderr)


def check(path):
    """Stream-decode `path`: size, validity, first error offset, U+FFFD count
    (Python's errors='replace', i.e. Unicode maximal-subpart substitution)."""
    import codecs
    strict = codecs.getincrementaldecoder("utf-8")()
    repl = codecs.getincrementaldecoder("utf-8")(errors="replace")
    size, first, fffd = 0, None, 0
    with open(path, "rb") as f:
        while True:
            b = f.read(BLOCK)
            fffd += repl.decode(b, final=not b).count("\ufffd")
            if first is None:
                pending = len(strict.getstate()[0])  # bytes held from the last block
                try:
                    strict.decode(b, final=not b)
                except UnicodeDecodeError as e:
                    first = size - pending + e.start
            if not b:
                break
            size += len(b)
    return {"file": path, "size": size, "valid": first is None,
            "first_error": first, "replacement_chars": fffd}


def cmd_check(a):
    for p in a.files:
        print(json.dumps(check(p)))


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="make_corpus.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    t = sub.add_parser(
        "tile", help="tile sample text to an exact size (valid UTF-8)",
        usage="make_corpus.py tile --size SIZE [--kind KIND | INPUT ...] [--seed S] "
        "[--no-shuffle] OUT",
        description="Write exactly SIZE bytes of valid UTF-8 to OUT by repeating the "
        "paragraphs of the sample (--kind, default mixed) or of the INPUT files, in an "
        "order reshuffled each round from --seed.  Never cuts inside a sequence: the end "
        "is padded with ASCII spaces to hit SIZE exactly.  Streams in 8 MiB blocks "
        f"(multi-GiB files are fine).  Kinds: {', '.join(kinds_available())}.")
    t.add_argument("--size", required=True, help="bytes, with K/M/G suffix (binary: 1K=1024)")
    t.add_argument("--kind", help="sample name (corpus/sample/KIND.txt); default mixed")
    t.add_argument("--seed", default="1", help="PRNG seed (default 1)")
    t.add_argument("--no-shuffle", action="store_true",
                   help="repeat the paragraphs in file order instead of reshuffling")
    t.add_argument("paths", nargs="+", metavar="PATH",
                   help="INPUT files (optional, instead of --kind) then OUT")
    t.set_defaults(func=cmd_tile)

    i = sub.add_parser(
        "inject", help="copy a file with ill-formed UTF-8 injected at a rate",
        description="Copy IN to OUT (same size), overwriting characters with ill-formed "
        "UTF-8 at RATE errors per byte (0.01 = one error per 100 bytes on average). "
        "Error types (weights): " + ", ".join(f"{k} ({v[0]})" for k, v in ERROR_TYPES.items())
        + ".  Each error starts at a character boundary, overwrites whole characters "
        "(padding with spaces) and is followed by at least one valid byte, so errors never "
        "merge.  Prints JSON statistics; replacement_chars is the exact number of U+FFFD "
        "that Python's errors='replace' (Unicode maximal-subpart practice) yields for the "
        "injected errors (plus any already in IN).  Streams in 8 MiB blocks.")
    i.add_argument("--rate", type=float, required=True, help="errors per byte, e.g. 0.001")
    i.add_argument("--seed", default="1", help="PRNG seed (default 1)")
    i.add_argument("--types", help="comma list of error types to use (default all): "
                   + ",".join(ERROR_TYPES))
    i.add_argument("input", metavar="IN")
    i.add_argument("output", metavar="OUT")
    i.set_defaults(func=cmd_inject)

    b = sub.add_parser(
        "build", help="build the standard benchmark set + manifest.json",
        description="Build the standard benchmark set reproducibly: tiles of each --kinds "
        "at --size, then copies of the --inject-kinds tiles with each --rates of invalid "
        "UTF-8 (named KIND-invalid-Xpct.txt).  Writes OUT_DIR/manifest.json (parameters, "
        "sha256, expected U+FFFD counts) and prints 'sha256  path  size'.  Files whose "
        "manifest entry matches the parameters are not rebuilt (use --force).")
    b.add_argument("--out-dir", default=os.path.join(HERE, "generated"),
                   help="default corpus/generated (git-ignored)")
    b.add_argument("--size", default="256M", help="size of every file (default 256M)")
    b.add_argument("--seed", default="1", help="PRNG seed (default 1)")
    b.add_argument("--kinds", default="ascii,cjk,emoji,mixed",
                   help="valid tiles to build (default ascii,cjk,emoji,mixed)")
    b.add_argument("--inject-kinds", default="mixed",
                   help="tiles that get invalid variants (default mixed)")
    b.add_argument("--rates", default="0.001,0.01,0.05",
                   help="invalid rates (default 0.001,0.01,0.05)")
    b.add_argument("--force", action="store_true", help="rebuild even if up to date")
    b.set_defaults(func=cmd_build)

    c = sub.add_parser(
        "check", help="report validity and U+FFFD count of files",
        description="Stream-decode each FILE and print one JSON line: size, valid, "
        "first_error (byte offset) and "
        "replacement_chars (U+FFFD under Python's errors='replace').")
    c.add_argument("files", nargs="+", metavar="FILE")
    c.set_defaults(func=cmd_check)

    a = ap.parse_args(argv)
    a.func(a)


if __name__ == "__main__":
    main()
