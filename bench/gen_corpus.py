#!/usr/bin/env python3
"""Deterministic benchmark corpus generator for pkgtool (python3 stdlib only).

Each corpus is a package source folder:

    <out>/<name>/ContentInfo.plist     XML plist, ContentVersion "1.0",
                                        IAPProductIdentifier "com.example.bench.<name>"
    <out>/<name>/Contents/...          payload, nested, at most ~1000 files per folder

Corpora:
    small   ~20 MB in 2,000 files (text, CSV, small images)
    medium  ~300 MB: 50% incompressible media (5-15 MB .jpg/.mp4/.png),
            30% text/CSV, 20% as 10,000 small files
    large   ~1.5 GB, mostly big files (media 20-120 MB, text/CSV 10-50 MB)
    many    100,000 files of ~100 bytes
    huge    one file of 2 GiB - 1 MiB (incompressible) and four small text files:
            a package at the 2 GiB size limit

Everything derives from fixed seeds (random.Random(str)), so the output is
byte-identical on every run (same Python version): names, contents, modes
(0644 files / 0755 folders) and mtimes (fixed, 2020-01-01 UTC).

A stamp file <out>/<name>.json is written once a corpus is complete; if it
matches this generator, the corpus is not generated again.  Generation goes
into <out>/<name>.tmp and is renamed into place when complete.

Usage:
    gen_corpus.py [--out DIR] [--force] NAME...      generate (default out: bench/work/corpus)
    gen_corpus.py --hash DIR                         print a digest of a tree (names, modes, bytes)
    gen_corpus.py --info NAME [--out DIR]            print the stamp (JSON) of a generated corpus
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import time

FIXED_MTIME = 1577836800  # 2020-01-01T00:00:00Z
KB = 1000
MB = 1000 * 1000
MAX_PER_FOLDER = 1000
MIB = 1024 * 1024
GIB = 1024 * MIB

# --------------------------------------------------------------------------
# Content generators.  All take a random.Random and return bytes.
# --------------------------------------------------------------------------

_ALPHA = "abcdefghijklmnopqrstuvwxyz"


class Vocab:
    """Word and field pools, built once from a fixed seed."""

    def __init__(self):
        r = random.Random("pkgtool-bench-vocab-v1")
        words = set()
        while len(words) < 3000:
            n = r.choice((2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 9, 10, 11, 12))
            words.add("".join(r.choice(_ALPHA) for _ in range(n)))
        words = sorted(words)
        r.shuffle(words)
        self.words = words
        # Tokens: plain words, some capitalised, some ending a sentence/line.
        tokens = [w + " " for w in words]
        tokens += [w.capitalize() + " " for w in words[:300]]
        tokens += [w + ", " for w in words[:150]]
        tokens += [w + ".\n" for w in words[:200]]
        tokens += [w + ". " for w in words[200:400]]
        self.tokens = tokens
        self.avg_token = sum(map(len, tokens)) / len(tokens)
        # CSV field pools.
        self.dates = ["2023-%02d-%02d" % (m, d) for m in range(1, 13) for d in range(1, 29)]
        self.skus = ["SKU-%05d" % r.randrange(100000) for _ in range(5000)]
        self.names = ["%s %s" % (r.choice(words).capitalize(), r.choice(words)) for _ in range(2000)]
        self.prices = ["%d.%02d" % (r.randrange(1, 500), r.randrange(100)) for _ in range(3000)]
        self.qtys = [str(q) for q in range(1, 25)]
        self.regions = ["north", "south", "east", "west", "central", "online"]


VOCAB = None


def vocab():
    global VOCAB
    if VOCAB is None:
        VOCAB = Vocab()
    return VOCAB


def gen_text(r, size):
    v = vocab()
    out = []
    have = 0
    while have < size:
        k = int((size - have) / v.avg_token) + 16
        s = "".join(r.choices(v.tokens, k=min(k, 1 << 20)))
        out.append(s)
        have += len(s)
    return "".join(out).encode("ascii")[:size - 1] + b"\n"


def gen_csv(r, size):
    v = vocab()
    out = ["id,date,sku,name,price,qty,region\n"]
    have = len(out[0])
    row_id = r.randrange(1, 1000) * 1000
    while have < size:
        n = min(int((size - have) / 48) + 8, 200000)
        ids = map(str, range(row_id, row_id + n))
        row_id += n
        rows = map(",".join, zip(ids, r.choices(v.dates, k=n), r.choices(v.skus, k=n),
                                 r.choices(v.names, k=n), r.choices(v.prices, k=n),
                                 r.choices(v.qtys, k=n), r.choices(v.regions, k=n)))
        s = "\n".join(rows) + "\n"
        out.append(s)
        have += len(s)
    data = "".join(out).encode("ascii")
    cut = data.rfind(b"\n", 0, size)
    return data[:cut + 1] if cut > 0 else data[:size]


def gen_json(r, size):
    v = vocab()
    parts = ['{"items": [\n']
    have = len(parts[0])
    i = 0
    while have < size:
        s = '  {"id": %d, "title": "%s", "sku": "%s", "price": %s, "tags": ["%s", "%s"]},\n' % (
            i, r.choice(v.names), r.choice(v.skus), r.choice(v.prices),
            r.choice(v.words), r.choice(v.words))
        parts.append(s)
        have += len(s)
        i += 1
    parts.append('  {}\n]}\n')
    return "".join(parts).encode("ascii")


_MAGIC = {
    "jpg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00",
    "png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "mp4": b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom",
    "m4a": b"\x00\x00\x00\x1cftypM4A \x00\x00\x00\x00M4A mp42isom",
}
_TRAILER = {"jpg": b"\xff\xd9", "png": b"\x00\x00\x00\x00IEND\xaeB`\x82"}


def gen_media(r, size, ext):
    """Incompressible bytes behind a real media signature (never code magic)."""
    head = _MAGIC[ext]
    tail = _TRAILER.get(ext, b"")
    body = size - len(head) - len(tail)
    if body < 0:
        return (head + tail)[:size]
    return head + r.randbytes(body) + tail


def write_media(path, r, size, ext):
    """Stream a large media file in chunks (bounded memory)."""
    head = _MAGIC[ext]
    tail = _TRAILER.get(ext, b"")
    body = size - len(head) - len(tail)
    with open_out(path) as f:
        f.write(head)
        chunk = 8 * MB
        while body > 0:
            n = min(chunk, body)
            f.write(r.randbytes(n))
            body -= n
        f.write(tail)


def open_out(path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.fchmod(fd, 0o644)
    return os.fdopen(fd, "wb")


def gen_by_kind(r, kind, size):
    if kind == "txt":
        return gen_text(r, size)
    if kind == "csv":
        return gen_csv(r, size)
    if kind == "json":
        return gen_json(r, size)
    return gen_media(r, size, kind)


# --------------------------------------------------------------------------
# Corpus layouts.  A layout is a list of "groups"; each group yields
# (relative folder, file name, kind, size) entries.
# --------------------------------------------------------------------------

def folder_for(cat, index, per_folder):
    """Folder of the index-th file of a category: at most per_folder files per
    folder, at most 20 such folders per parent."""
    k = index // per_folder
    return "%s/p%02d/d%03d" % (cat, k // 20, k)


def sizes_until(r, total, lo, hi):
    out = []
    s = 0
    while s < total:
        n = r.randint(lo, hi)
        n = min(n, total - s) if total - s >= lo else n
        out.append(n)
        s += n
    return out


def plan_small():
    r = random.Random("plan-small")
    plan = []
    for i in range(1000):
        plan.append((folder_for("text", i, 500), "text_%05d.txt" % i, "txt", r.randint(2 * KB, 16 * KB)))
    for i in range(400):
        plan.append((folder_for("data", i, 500), "table_%05d.csv" % i, "csv", r.randint(4 * KB, 20 * KB)))
    for i in range(600):
        ext = "jpg" if i % 2 else "png"
        plan.append((folder_for("images", i, 500), "img_%05d.%s" % (i, ext), ext, r.randint(4 * KB, 16 * KB)))
    return plan


def plan_medium():
    r = random.Random("plan-medium")
    plan = []
    exts = ("jpg", "mp4", "png")
    for i, n in enumerate(sizes_until(r, 150 * MB, 5 * MB, 15 * MB)):
        ext = exts[i % 3]
        plan.append(("media/%s" % ext, "media_%03d.%s" % (i, ext), ext, n))
    for i, n in enumerate(sizes_until(r, 90 * MB, 1 * MB, 5 * MB)):
        kind = "csv" if i % 2 else "txt"
        plan.append(("documents/%s" % kind, "doc_%03d.%s" % (i, kind), kind, n))
    kinds = ("txt", "json", "png", "txt", "csv", "jpg", "txt", "json", "png", "txt")
    for i in range(10000):
        kind = kinds[i % len(kinds)]
        plan.append((folder_for("assets", i, 1000), "asset_%05d.%s" % (i, kind), kind,
                     r.randint(1 * KB, 11 * KB)))
    return plan


def plan_large():
    r = random.Random("plan-large")
    plan = []
    exts = ("mp4", "jpg", "png", "m4a")
    for i, n in enumerate(sizes_until(r, 1000 * MB, 20 * MB, 120 * MB)):
        ext = exts[i % len(exts)]
        plan.append(("media/%s" % ext, "media_%03d.%s" % (i, ext), ext, n))
    for i, n in enumerate(sizes_until(r, 400 * MB, 10 * MB, 50 * MB)):
        kind = "csv" if i % 2 else "txt"
        plan.append(("documents/%s" % kind, "doc_%03d.%s" % (i, kind), kind, n))
    kinds = ("txt", "png", "json", "jpg", "csv")
    for i in range(1000):
        kind = kinds[i % len(kinds)]
        plan.append((folder_for("assets", i, 500), "asset_%05d.%s" % (i, kind), kind,
                     r.randint(50 * KB, 150 * KB)))
    return plan


def plan_many():
    r = random.Random("plan-many")
    plan = []
    for i in range(100000):
        plan.append((folder_for("records", i, 1000), "rec_%06d.txt" % i, "txt", r.randint(60, 140)))
    return plan


def plan_huge():
    """The largest payload file the 2 GiB limit allows room for, and a few small files."""
    plan = [("media", "film.mp4", "mp4", 2 * GIB - MIB)]
    for i, kind in enumerate(("txt", "csv", "json", "txt")):
        plan.append(("notes", "note_%d.%s" % (i, kind), kind, (4 + i) * KB))
    return plan


PLANS = {"small": plan_small, "medium": plan_medium, "large": plan_large, "many": plan_many, "huge": plan_huge}

CONTENT_INFO = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
\t<key>ContentVersion</key>
\t<string>1.0</string>
\t<key>IAPProductIdentifier</key>
\t<string>com.example.bench.%s</string>
</dict>
</plist>
"""


def generator_id():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def stamp_path(out, name):
    return os.path.join(out, name + ".json")


def read_stamp(out, name):
    try:
        with open(stamp_path(out, name)) as f:
            st = json.load(f)
    except (OSError, ValueError):
        return None
    if st.get("complete") and st.get("generator") == generator_id() and \
            os.path.isdir(os.path.join(out, name, "Contents")):
        return st
    return None


def generate(out, name, force=False, quiet=False):
    st = None if force else read_stamp(out, name)
    if st is not None:
        if not quiet:
            print("%s: up to date (%d files, %d bytes)" % (name, st["fileCount"], st["payloadBytes"]),
                  file=sys.stderr)
        return st
    t0 = time.monotonic()
    final = os.path.join(out, name)
    tmp = final + ".tmp"
    for p in (stamp_path(out, name), ):
        if os.path.exists(p):
            os.unlink(p)
    for d in (tmp, final):
        if os.path.lexists(d):
            shutil.rmtree(d)
    os.makedirs(tmp)
    os.chmod(tmp, 0o755)
    with open_out(os.path.join(tmp, "ContentInfo.plist")) as f:
        f.write((CONTENT_INFO % name).encode("utf-8"))

    plan = PLANS[name]()
    made = set()
    total = 0
    for (folder, fname, kind, size) in plan:
        d = os.path.join(tmp, "Contents", folder)
        if d not in made:
            os.makedirs(d, exist_ok=True)
            made.add(d)
        path = os.path.join(d, fname)
        # One seed per file: contents do not depend on generation order.
        r = random.Random("%s/%s/%s" % (name, folder, fname))
        if kind in _MAGIC and size > 16 * MB:
            write_media(path, r, size, kind)
        else:
            data = gen_by_kind(r, kind, size)
            with open_out(path) as f:
                f.write(data)
            size = len(data)
        total += size

    # Fixed modes and mtimes everywhere (folders last, deepest first).
    for root, dirs, files in os.walk(tmp, topdown=False):
        for fn in files:
            os.utime(os.path.join(root, fn), (FIXED_MTIME, FIXED_MTIME))
        os.chmod(root, 0o755)
        os.utime(root, (FIXED_MTIME, FIXED_MTIME))
    os.rename(tmp, final)

    st = {
        "name": name,
        "generator": generator_id(),
        "productIdentifier": "com.example.bench." + name,
        "contentVersion": "1.0",
        "fileCount": len(plan),
        "payloadBytes": total,
        "folders": len(made),
        "seconds": round(time.monotonic() - t0, 2),
        "complete": True,
    }
    with open(stamp_path(out, name) + ".tmp", "w") as f:
        json.dump(st, f, indent=1, sort_keys=True)
        f.write("\n")
    os.rename(stamp_path(out, name) + ".tmp", stamp_path(out, name))
    if not quiet:
        print("%s: generated %d files, %d bytes in %.1f s" % (name, len(plan), total, st["seconds"]),
              file=sys.stderr)
    return st


def tree_hash(top):
    """Digest of a tree: sorted relative paths, types, modes, sizes and bytes."""
    h = hashlib.sha256()
    count = 0
    for root, dirs, files in os.walk(top):
        dirs.sort()
        rel = os.path.relpath(root, top)
        st = os.lstat(root)
        h.update(b"D %s %o\0" % (rel.encode(), st.st_mode & 0o7777))
        for fn in sorted(files):
            p = os.path.join(root, fn)
            st = os.lstat(p)
            h.update(b"F %s %o %d\0" % (os.path.join(rel, fn).encode(), st.st_mode & 0o7777, st.st_size))
            fh = hashlib.sha256()
            with open(p, "rb") as f:
                while True:
                    b = f.read(1 << 20)
                    if not b:
                        break
                    fh.update(b)
            h.update(fh.digest())
            count += 1
    return h.hexdigest(), count


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(here, "work", "corpus"))
    ap.add_argument("--force", action="store_true", help="regenerate even if the stamp says complete")
    ap.add_argument("--hash", metavar="DIR", help="print a digest of the tree DIR and exit")
    ap.add_argument("--info", action="store_true", help="print the stamps of the named corpora")
    ap.add_argument("-q", "--quiet", action="store_true")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()

    if a.hash:
        digest, n = tree_hash(a.hash)
        print("%s  %d files  %s" % (digest, n, a.hash))
        return 0
    bad = [n for n in a.names if n not in PLANS]
    if bad or not a.names:
        ap.error("corpus names: %s" % " ".join(PLANS))
    os.makedirs(a.out, exist_ok=True)
    for n in a.names:
        if a.info:
            st = read_stamp(a.out, n)
            if st is None:
                print("%s: not generated" % n, file=sys.stderr)
                return 1
            print(json.dumps(st, sort_keys=True))
        else:
            generate(a.out, n, force=a.force, quiet=a.quiet)
            print(os.path.join(a.out, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
