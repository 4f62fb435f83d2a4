#!/usr/bin/env python3
"""Build the `real` corpus: a package source folder copied from what this machine has.

    real_corpus.py [--out DIR] [--source DIR]...

Copies /usr/share (fonts, icons, locale catalogs, manual pages, documentation,
dictionaries...) into OUT/real/Contents/, leaving out what a package may not hold
or what is not content: symbolic links, special files, machine code (ELF) and
scripts (#!), files with no read permission, and /usr/share/package-lists. Files
are copied in sorted order with fixed modes and times, so the same machine gives
the same folder every time. The folder is built once, then reused while its stamp
(OUT/real.json) names the same sources.
"""
import argparse
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_corpus import CONTENT_INFO, FIXED_MTIME  # noqa: E402  (the generated corpora's plist and times)

SKIP = {"/usr/share/package-lists"}
# Machine code and scripts: the package rules refuse them.
CODE_MAGIC = (b"\x7fELF", b"#!", b"MZ", b"!<arch>\n", b"\xca\xfe\xba\xbe", b"\xfe\xed\xfa", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe")


def wanted(path):
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return False
    return not head.startswith(CODE_MAGIC)


def junk(name):
    return name in (".DS_Store", "Thumbs.db", "desktop.ini", "__MACOSX", ".git", ".svn", ".hg") or name.startswith("._")


def build(out, sources):
    final = os.path.join(out, "real")
    stamp = final + ".json"
    try:
        with open(stamp) as f:
            st = json.load(f)
        if st.get("sources") == sources and os.path.isdir(final):
            return st
    except (OSError, ValueError):
        pass
    t0 = time.monotonic()
    tmp = final + ".tmp"
    for d in (tmp, final):
        if os.path.lexists(d):
            shutil.rmtree(d)
    if os.path.exists(stamp):
        os.unlink(stamp)
    os.makedirs(os.path.join(tmp, "Contents"))
    with open(os.path.join(tmp, "ContentInfo.plist"), "w") as f:
        f.write(CONTENT_INFO % "real")
    count = total = 0
    for source in sources:
        base = os.path.basename(source.rstrip("/"))
        for root, dirs, files in os.walk(source):
            dirs[:] = sorted(d for d in dirs if os.path.join(root, d) not in SKIP and not junk(d)
                             and not os.path.islink(os.path.join(root, d)))
            rel = os.path.relpath(root, source)
            target = os.path.normpath(os.path.join(tmp, "Contents", base, rel))
            os.makedirs(target, exist_ok=True)
            for name in sorted(files):
                path = os.path.join(root, name)
                if junk(name) or os.path.islink(path) or not os.path.isfile(path) or not wanted(path):
                    continue
                dest = os.path.join(target, name)
                shutil.copyfile(path, dest)
                os.chmod(dest, 0o644)
                os.utime(dest, (FIXED_MTIME, FIXED_MTIME))
                count += 1
                total += os.path.getsize(dest)
    for root, dirs, files in os.walk(tmp, topdown=False):
        if root != tmp and not os.listdir(root):
            os.rmdir(root)
            continue
        os.chmod(root, 0o755)
        os.utime(root, (FIXED_MTIME, FIXED_MTIME))
    os.rename(tmp, final)
    st = {"name": "real", "sources": sources, "fileCount": count, "payloadBytes": total,
          "seconds": round(time.monotonic() - t0, 2), "complete": True}
    with open(stamp + ".tmp", "w") as f:
        json.dump(st, f, indent=1, sort_keys=True)
        f.write("\n")
    os.rename(stamp + ".tmp", stamp)
    print("real: copied %d files, %d bytes in %.1f s" % (count, total, st["seconds"]), file=sys.stderr)
    return st


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(here, "work", "corpus"))
    ap.add_argument("--source", action="append", help="folder to copy (default /usr/share)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    st = build(a.out, a.source or ["/usr/share"])
    print(json.dumps(st))


if __name__ == "__main__":
    main()
