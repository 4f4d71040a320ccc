#!/usr/bin/env python3
"""Emits the launch files of a set of picks and checks every shell script in
them with shellcheck at warning level (issue 36: tests with the real tools).

   scripts/check_launch_files.py BUILD/gpuadvisor          the check
   scripts/check_launch_files.py --self-test               shows it fails on a bad script

Shell is checked wherever the files hold it: *.sh and *.sbatch as they are,
SkyPilot's `setup` and `run` blocks, and Kubernetes containers' `bash -c`
scripts (YAML parsed with PyYAML). shellcheck and PyYAML come from Debian's
`shellcheck` and `python3-yaml`, installed by scripts/test.sh; a missing tool
is a failure, not a skip.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_picks import PICKS  # noqa: E402

TARGETS = ("slurm", "skypilot", "k8s")


def shell_in_yaml(path):
    """The shell scripts a YAML launch file holds, as (name, text)."""
    import yaml  # python3-yaml

    out = []
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    for i, doc in enumerate(docs):
        for key in ("setup", "run"):  # SkyPilot task or service
            if isinstance(doc.get(key), str):
                out.append((f"{path}#{key}", doc[key]))
        out.extend((f"{path}#doc{i}", s) for s in bash_c_scripts(doc))
    return out


def bash_c_scripts(node):
    """Every `bash -c SCRIPT` (or `sh -c`) in a Kubernetes object's commands and args."""
    found = []
    if isinstance(node, dict):
        argv = (node.get("command") or []) + (node.get("args") or []) if isinstance(node.get("command", []), list) else []
        for j, a in enumerate(argv[:-1]):
            if a == "-c" and isinstance(argv[j + 1], str):
                found.append(argv[j + 1])
        for v in node.values():
            found.extend(bash_c_scripts(v))
    elif isinstance(node, list):
        for v in node:
            found.extend(bash_c_scripts(v))
    return found


def shellcheck(name, text, tmp):
    script = os.path.join(tmp, "check.sh")
    with open(script, "w") as f:
        f.write(text if text.startswith("#!") else "#!/usr/bin/env bash\n" + text)
    r = subprocess.run(["shellcheck", "-S", "warning", "-s", "bash", script], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: {name} does not pass shellcheck -S warning:\n{r.stdout}{r.stderr}")
    return r.returncode == 0


def check_dir(d, tmp):
    ok, checked = True, 0
    for root, _, files in os.walk(d):
        for f in sorted(files):
            path = os.path.join(root, f)
            if f.endswith((".sh", ".sbatch")):
                with open(path) as fh:
                    ok &= shellcheck(path, fh.read(), tmp)
                checked += 1
            elif f.endswith((".yaml", ".yml")):
                for name, text in shell_in_yaml(path):
                    ok &= shellcheck(name, text, tmp)
                    checked += 1
    return ok, checked


def require_tools():
    missing = [t for t in ("shellcheck",) if not shutil.which(t)]
    try:
        import yaml  # noqa: F401
    except ImportError:
        missing.append("python3-yaml")
    if missing:
        print(f"FAIL: {', '.join(missing)} not installed (scripts/test.sh installs them: apt-get install shellcheck python3-yaml)")
        sys.exit(1)


def main():
    require_tools()
    tmp = tempfile.mkdtemp(prefix="gpuadvisor-launch-check-")
    try:
        if sys.argv[1:] == ["--self-test"]:
            bad = os.path.join(tmp, "bad")
            os.makedirs(bad)
            with open(os.path.join(bad, "x.sh"), "w") as f:
                f.write("#!/usr/bin/env bash\nrm -rf $DIR/*\n")  # SC2115/SC2086: must fail
            ok, _ = check_dir(bad, tmp)
            print("the check refuses a bad script" if not ok else "FAIL: a bad script passed")
            sys.exit(0 if not ok else 1)
        binary = sys.argv[1]
        ok, total = True, 0
        for name, args in PICKS.items():
            for target in TARGETS:
                d = os.path.join(tmp, f"{name}-{target}")
                r = subprocess.run([binary] + args.split() + ["--emit", target, "--emit-dir", d], capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"FAIL: {args} --emit {target} exited {r.returncode}: {r.stderr.strip()[-400:]}")
                    ok = False
                    continue
                dir_ok, n = check_dir(d, tmp)
                ok &= dir_ok
                total += n
        if total == 0:
            print("FAIL: no shell script found in the emitted files")
            ok = False
        print(f"{total} shell scripts checked" if ok else "")
        sys.exit(0 if ok else 1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
