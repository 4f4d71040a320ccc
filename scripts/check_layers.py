#!/usr/bin/env python3
"""Refuses an include that points up the layers (docs/architecture.md).

The layers, lowest first: base, catalog, workload, physics, serving, search,
validation, report, cli. A file in src/<layer>/ or include/gpuadvisor/<layer>/
may include its own layer and those below it, never one above. The check also
refuses a source file outside the layer folders and a file whose first line
does not say its layer ("// Layer <layer>: ...").

  scripts/check_layers.py [ROOT]     check the tree (exit 1 and every violation)
  scripts/check_layers.py --self-test   prove the check refuses an upward include
  scripts/check_layers.py --objects BUILD_DIR
      the same direction at link level: no object of a lower layer uses a
      symbol that an object of a higher layer defines (a function declared
      low but defined high), read with nm from the built objects
"""
import collections
import pathlib
import re
import subprocess
import sys
import tempfile

LAYERS = ["base", "catalog", "workload", "physics", "serving", "search", "validation", "report", "cli"]
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of_include(path: str, own_layer: str) -> str:
    parts = path.split("/")
    if parts[0] == "gpuadvisor" and len(parts) >= 3 and parts[1] in RANK:
        return parts[1]
    if parts[0] in RANK and len(parts) >= 2:
        return parts[0]
    return own_layer  # a header beside the file ("cli.hpp")


def check(root: pathlib.Path) -> list[str]:
    problems = []
    src, inc = root / "src", root / "include" / "gpuadvisor"
    for folder in (src, inc):
        for f in sorted(folder.rglob("*")):
            if f.suffix not in (".cpp", ".hpp"):
                continue
            rel = f.relative_to(folder).parts
            where = f.relative_to(root)
            if len(rel) < 2 or rel[0] not in RANK:
                problems.append(f"{where}: outside the layer folders ({', '.join(LAYERS)})")
                continue
            layer = rel[0]
            text = f.read_text(encoding="utf-8")
            if not text.startswith(f"// Layer {layer}:"):
                problems.append(f"{where}: first line must be '// Layer {layer}: <what the layer is>'")
            for m in INCLUDE.finditer(text):
                target = layer_of_include(m.group(1), layer)
                if RANK[target] > RANK[layer]:
                    line = text.count("\n", 0, m.start()) + 1
                    problems.append(f"{where}:{line}: layer {layer} includes \"{m.group(1)}\" from the higher layer {target}")
    return problems


def self_test() -> int:
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        (root / "src" / "physics").mkdir(parents=True)
        (root / "include" / "gpuadvisor" / "report").mkdir(parents=True)
        (root / "include" / "gpuadvisor" / "report" / "r.hpp").write_text("// Layer report: r\n")
        good = '// Layer physics: p\n#include "gpuadvisor/base/x.hpp"\n#include "local.hpp"\n'
        (root / "src" / "physics" / "p.cpp").write_text(good)
        if check(root):
            print("self-test: a downward include was refused:", check(root))
            return 1
        (root / "src" / "physics" / "p.cpp").write_text(good + '#include "gpuadvisor/report/r.hpp"\n')
        (root / "src" / "loose.cpp").write_text("// Layer base: x\n")
        (root / "src" / "physics" / "q.cpp").write_text('#include "report/detail.hpp"\n')
        found = check(root)
        wanted = ["p.cpp:4: layer physics includes", "loose.cpp: outside", "q.cpp: first line", "q.cpp:1: layer physics includes"]
        missing = [w for w in wanted if not any(w in p for p in found)]
        if missing:
            print("self-test: not refused:", missing, "found:", found)
            return 1
    print("self-test: upward includes, loose files and unlabelled files are refused")
    return 0


def nm(obj: pathlib.Path, *flags: str) -> list[str]:
    out = subprocess.run(["nm", "-C", *flags, str(obj)], capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def check_objects(build: pathlib.Path) -> list[str]:
    objects = sorted(build.glob("CMakeFiles/*.dir/src/*/*.o"))
    if not objects:
        return [f"{build}: no objects under CMakeFiles/*.dir/src/<layer>/ (build first)"]
    layer = {o: o.parent.name for o in objects}
    defined_by = {}
    for o in objects:
        for line in nm(o, "--defined-only", "-g"):
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[1] in "TDBRV":
                defined_by.setdefault(parts[2], o)
    problems = collections.OrderedDict()
    for o in objects:
        for line in nm(o, "-u"):
            symbol = line.strip().split(" ", 1)[-1]
            d = defined_by.get(symbol)
            if d is not None and layer[o] in RANK and layer[d] in RANK and RANK[layer[d]] > RANK[layer[o]]:
                problems.setdefault(f"{layer[o]}/{o.stem} uses {symbol[:120]}, defined in the higher layer {layer[d]}/{d.stem}", None)
    return list(problems)


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if sys.argv[1:2] == ["--objects"] and len(sys.argv) == 3:
        problems = check_objects(pathlib.Path(sys.argv[2]))
        for p in problems:
            print(p)
        if problems:
            return 1
        print("layers: no object uses a symbol a higher layer defines")
        return 0
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"layers: every include points down ({' < '.join(LAYERS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
