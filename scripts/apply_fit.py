#!/usr/bin/env python3
"""Writes the fit of `gpuadvisor calibrate --from-priors` into data/catalog.json.

   python3 scripts/apply_fit.py     (then rebuild: the catalog is embedded)

Only the fitted accelerators change; their efficiency source becomes GPA-FIT.
"""
import json, subprocess, sys, os, tempfile
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = os.path.join(root, "build", "gpuadvisor")
with tempfile.TemporaryDirectory() as tmp:
    overlay_path = os.path.join(tmp, "fit.json")
    subprocess.run([binary, "-q", "calibrate", "--from-priors", "--output", overlay_path], check=True, stdout=subprocess.DEVNULL)
    overlay = json.load(open(overlay_path))
catalog_path = os.path.join(root, "data", "catalog.json")
catalog = json.load(open(catalog_path))
fitted = {a["name"]: a["efficiency"] for a in overlay["accelerators"]}
for acc in catalog["accelerators"]:
    if acc["name"] not in fitted:
        continue
    eff = dict(fitted[acc["name"]])
    eff["source"] = "GPA-FIT"
    acc["efficiency"] = eff
    print(f"{acc['name']}: {eff}", file=sys.stderr)
open(catalog_path, "w").write(json.dumps(catalog, indent=1, ensure_ascii=False) + "\n")
