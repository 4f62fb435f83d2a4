#!/usr/bin/env python3
"""Turn bench/work/codecs-CORPUS.tsv (from codecs.c) into the Markdown table of bench/CODECS.md.

    codecs_table.py --work DIR --out CODECS.md CORPUS...
"""
import argparse
import collections
import os

CLASSES = ("<64K", "64K-1M", "1M-4M", "4M-16M", ">=16M")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("corpora", nargs="+")
    a = ap.parse_args()
    out = ["## Deflate engines and levels (`bench/codecs.sh`)", "",
           "Every file of the corpus compressed by each engine on one thread (`codecs.c`); a file that does not "
           "shrink counts as stored, as `create` stores it. MB = compressed bytes (10^6) of all files; "
           "ratio = MB / zlib level 6's (bsdtar's codec); CPU s = the thread's CPU time compressing; "
           "then the ratio to zlib 6 by file size. ISA-L is fed in 1 MiB pieces, as `create` feeds it. CPU s counts "
           "incompressible files compressed in full, which `create` stores after a trial on its first 16 or 64 KiB (most of `medium`'s "
           "4M-16M class), so there it overstates what `create` spends.", ""]
    for corpus in a.corpora:
        rows = collections.OrderedDict()
        raw = collections.Counter()
        with open(os.path.join(a.work, "codecs-%s.tsv" % corpus)) as f:
            for line in f:
                engine, level, cls, files, size, stored, cpu = line.split("\t")
                key = (engine, int(level))
                rows.setdefault(key, {})[cls] = (int(stored), float(cpu))
                if key == ("zlib", 6):
                    raw[cls] = int(size)
        base = rows[("zlib", 6)]
        present = [c for c in CLASSES if c in base]
        out.append("### %s: %.1f MB in files of %s" % (corpus, sum(raw.values()) / 1e6, ", ".join(
            "%s %.0f MB" % (c, raw[c] / 1e6) for c in present)))
        out.append("")
        out.append("| engine | level | MB | ratio | CPU s | " + " | ".join(present) + " |")
        out.append("|---|---:|---:|---:|---:|" + "---:|" * len(present))
        base_total = sum(v[0] for v in base.values())
        for (engine, level), by_class in rows.items():
            total = sum(v[0] for v in by_class.values())
            cpu = sum(v[1] for v in by_class.values())
            cells = ["%.3f" % (by_class[c][0] / base[c][0]) if c in by_class else "" for c in present]
            out.append("| %s | %d | %.2f | %.4f | %.2f | %s |" % (engine, level, total / 1e6, total / base_total, cpu,
                                                                   " | ".join(cells)))
        out.append("")
    text = "\n".join(out)
    with open(a.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
