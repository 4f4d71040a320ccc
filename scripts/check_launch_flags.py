#!/usr/bin/env python3
"""Emits launch files for a set of picks and checks every engine and framework
flag and config key in them against data/launch_flags.json, the list of what
each tool accepts at a named version (issue 36: tests with the real tools).
A flag or key not in the list, or a value outside a flag's listed values,
fails: a misspelt or renamed flag makes a launch fail on the user's cluster.

   scripts/check_launch_flags.py BUILD/gpuadvisor     the check
   scripts/check_launch_flags.py --self-test          shows it fails on an unknown flag
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = json.load(open(os.path.join(ROOT, "data", "launch_flags.json")))["tools"]

# Picks that reach every branch of the writers: each engine, weight and KV
# format, dense and MoE training with pipeline interleaving and fp8, and RL
# colocated and split on FSDP and Megatron.
PICKS = [
    "recommend --params 70B --task pretrain --tokens 1T --deadline 30d --exclude trn1",
    "recommend --params 8B --task pretrain --tokens 20B --family p5 --max-instances 2",
    "estimate --instance p5.48xlarge --count 4 --model llama-3-70b --task pretrain --tokens 10B --tp 4 --pp 4 --vp 2 --micro-batch 1 --zero-stage 1 --precision fp8",
    "estimate --instance p5.48xlarge --count 8 --model mixtral-8x7b --task pretrain --tokens 10B --tp 2 --pp 2 --ep 8 --micro-batch 1 --zero-stage 1 --precision fp8",
    "recommend --params 7B --task rl",
    "recommend --params 7B --task rl --placement split --family p5",
    "recommend --params 7B --task rl --family p5 --algorithm ppo --reward model --reward-model 7B",
    "recommend --params 70B --task rl --family p5 --placement split",
    "recommend --model llama-3-8b --task inference --requests-per-second 20",
    "recommend --model llama-3-8b --task inference --requests-per-second 20 --engine sglang --weights fp8 --kv-cache fp8",
    "recommend --model llama-3-8b --task inference --requests-per-second 2 --engine vllm@0.7.3",
    "recommend --model llama-3-8b --task inference --requests-per-second 20 --engine trtllm --weights int4",
    "recommend --model llama-3-8b --task inference --requests-per-second 20 --engine tgi --weights int8",
    "recommend --model llama-3-8b --task inference --requests-per-second 20 --engine tgi --kv-cache fp8",
    "recommend --model deepseek-v3 --task inference --requests-per-second 5",
    "recommend --model deepseek-v3 --task inference --requests-per-second 5 --family p5",
    "recommend --model llama-3-8b --task inference --requests-per-second 60 --family p4d",
    "recommend --model llama-3-8b --task inference --requests-per-second 60 --family p4d --engine sglang",
    "estimate --instance p5en.48xlarge --model deepseek-v3 --task inference --tp 8 --ep 8 --attention-dp 8 --engine trtllm",
    "estimate --instance p5en.48xlarge --model deepseek-v3 --task inference --tp 8 --ep 8 --attention-dp 8 --engine sglang",
]
TARGETS = ("slurm", "skypilot", "k8s")

# A serving or Ray command on a line (commented alternatives included): its flags run to the end of the command.
COMMANDS = [
    ("vllm", re.compile(r"vllm serve \S+((?: --[A-Za-z0-9_-]+(?: [^\s'\"-][^\s'\";&|]*)?)*)")),
    ("sglang", re.compile(r"sglang\.launch_server((?: --[A-Za-z0-9_-]+(?: [^\s'\"-][^\s'\";&|]*)?)*)")),
    ("trtllm", re.compile(r"trtllm-serve \S+((?: --[A-Za-z0-9_-]+(?: [^\s'\"-][^\s'\";&|]*)?)*)")),
    ("tgi", re.compile(r"text-generation-launcher((?: --[A-Za-z0-9_-]+(?: [^\s'\"-][^\s'\";&|]*)?)*)")),
    ("ray", re.compile(r"ray start((?: --[A-Za-z0-9_-]+(?:[= ][^\s'\"-][^\s'\";&|]*)?)*)")),
]
FLAG = re.compile(r"--([A-Za-z0-9_-]+)(?:[= ]([^\s'\"-][^\s'\";&|]*))?")


def known(tool, name, value=None, kind="flags"):
    """'' when the tool accepts the flag or key (and its value where values are listed), else why not."""
    entry = TOOLS[tool]
    if name not in entry.get(kind, []):
        return f"{tool} has no {name} at {entry['version'].split(' ')[0]} ({entry['source'].split(' ')[0]})"
    allowed = entry.get("values", {}).get(name)
    if allowed is not None and value is not None:
        for v in value if isinstance(value, list) else [value]:
            if v not in allowed:
                return f"{tool} {name} takes {', '.join(allowed)}, not {v}"
    return ""


def flatten(obj, prefix=""):
    """Dotted keys of a nested mapping with their leaf values."""
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            yield from flatten(v, key + ".")
        else:
            yield key, v


def problems_in(path):
    name, text = os.path.basename(path), open(path).read()
    out = []
    if name == "megatron_args.txt":
        for line in text.splitlines():
            if line.startswith("--"):
                flag, _, value = line.partition(" ")
                out.append(known("megatron", flag, value or None))
    elif name == "torchtitan.toml":
        for key, value in flatten(tomllib.loads(text)):
            out.append(known("torchtitan", key, value, "keys"))
    elif name == "deepspeed.json":
        for key, _ in flatten(json.loads(text)):
            out.append(known("deepspeed", key, None, "keys"))
    elif name == "verl_args.txt":
        for line in text.splitlines():
            if line and not line.startswith("#"):
                out.append(known("verl", line.split("=", 1)[0].lstrip("+"), None, "keys"))
    else:
        for line in text.splitlines():
            for tool, pattern in COMMANDS:
                for m in pattern.finditer(line):
                    for f in FLAG.finditer(m.group(1)):
                        out.append(known(tool, "--" + f.group(1), f.group(2)))
    return [f"{path}: {p}" for p in out if p]


def check_dir(d):
    problems, files = [], 0
    for root, _, names in os.walk(d):
        for n in sorted(names):
            problems += problems_in(os.path.join(root, n))
            files += 1
    return problems, files


def main():
    tmp = tempfile.mkdtemp(prefix="gpuadvisor-launch-flags-")
    try:
        if sys.argv[1:] == ["--self-test"]:
            with open(os.path.join(tmp, "serve_commands.sh"), "w") as f:
                f.write("vllm serve m --tensor-parallel-size 2 --max-num-seqz 8 --port 8000\n# python -m sglang.launch_server --model-path m --tp 2\n")
            with open(os.path.join(tmp, "megatron_args.txt"), "w") as f:
                f.write("--num-layers 2\n--virtual-pipeline-model-parallel-size 2\n")
            problems, _ = check_dir(tmp)
            want = ("--max-num-seqz", "--tp ", "--virtual-pipeline-model-parallel-size")
            ok = len(problems) == 3 and all(any(w in p for p in problems) for w in want)
            print("the check refuses unknown flags" if ok else f"FAIL: expected 3 refusals, got {problems}")
            sys.exit(0 if ok else 1)
        binary, problems, files, flags = sys.argv[1], [], 0, 0
        for i, args in enumerate(PICKS):
            for target in TARGETS:
                d = os.path.join(tmp, f"{i}-{target}")
                r = subprocess.run([binary] + args.split() + ["--emit", target, "--emit-dir", d], capture_output=True, text=True)
                if r.returncode != 0:
                    problems.append(f"{args} --emit {target} exited {r.returncode}: {r.stderr.strip()[-300:]}")
                    continue
                p, n = check_dir(d)
                problems += p
                files += n
        for p in problems:
            print("FAIL:", p)
        if files == 0:
            print("FAIL: no launch file written")
        print(f"{files} launch files checked against data/launch_flags.json" if not problems and files else "")
        sys.exit(0 if files and not problems else 1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
