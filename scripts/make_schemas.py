#!/usr/bin/env python3
"""Tightens docs/schema/*.schema.json from the binary's real documents.

   scripts/make_schemas.py BUILD/gpuadvisor [SCHEMA...]

For each schema it runs the commands of CORPUS below, infers from their JSON
documents a strict schema (every field typed, `null` only where a document had
null, `required` = the keys every document had, unknown keys refused with
`additionalProperties: false`), and keeps what a person wrote by hand in the
current file at the same place: description, enum, const, pattern, minimum,
maximum, and the type of a field the corpus only saw as null. Review the diff
before committing: a key that vanished from `required` or a field only ever
seen as null means the corpus lacks a case (the script lists them on stderr).
tests/test_schema.cpp checks real outputs against the committed schemas and
that each schema rejects corrupted documents (scripts/check_schema.py --mutate).
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA_DIR = os.path.join(ROOT, "docs", "schema")
TESTS = os.path.join(ROOT, "tests", "data")

# The commands whose documents define each schema: (arguments, exit code).
CORPUS = {
    "recommend": [
        ("recommend --params 13B --task lora", 0),
        ("recommend --params 13B --task lora --data-region us-west-2", 0),
        ("recommend --params 13B --task lora --region any --data-region us-west-2", 0),
        ("recommend --model llama-3-70b --task pretrain --tokens 1T --deadline 30d --data-region us-west-2", 0),
        ("recommend --params 70B --task qlora --data-region us-west-2", 0),
        ("recommend --params 70B --task qlora --checkpoint-storage fsx-lustre", 0),  # an adapter's working store is S3 unless chosen
        ("recommend --params 7B --task inference", 0),
        ("recommend --params 7B --task inference --requests-per-second 2", 0),
        ("recommend --params 7B --task inference --requests-per-second 2 --reasoning-tokens 300", 0),
        ("recommend --model llama-3-8b --task inference --requests-per-second 4 --slo-percentile mean --family g6e,p5", 0),
        ("recommend --model llama-3-70b --task pretrain --tokens 1T --deadline 30d", 0),
        ("recommend --model llama-3-70b --task pretrain --tokens 1T", 0),
        ("recommend --model llama-3-70b --task pretrain --tokens 1T --checkpoint-storage fsx-lustre", 0),  # bills with a working store
        ("recommend --model llama-2-7b --task pretrain --tokens 50B --deadline 14d --cost-slack 0.2 --checkpoint-storage fsx-lustre", 0),
        ("recommend --params 13B --task lora --quota-vcpus p=192,g=0,inf=0,trn=0", 0),
        ("recommend --params 13B --task lora --quota-vcpus 384", 0),
        # A pick in Capacity Blocks beside the same type at the count one starts on demand (alternatives.on_demand).
        ("recommend --model llama-2-7b --task pretrain --tokens 50B --deadline 14d --cost-slack 0.2", 0),
        ("recommend --params 7B --task rl --family p4d --value-of-time 5000 --algorithm ppo", 0),
        ("recommend --model llama-3-70b --task pretrain --tokens 20B --family p5 --pricing spot", 0),
        ("recommend --params 70B --task pretrain --tokens 1T --pricing spot", 0),  # alternatives.other_channels
        ("recommend --params 70B --task pretrain --tokens 1T --pricing spot --checkpoint-storage fsx-lustre", 0),  # bills with a working store
        ("recommend --model llama-3-8b --task pretrain --tokens 1T --deadline 30d --family p5,p5en,p6-b200", 0),  # recommendation.roomier_micro_batch
        ("recommend --params 7B --task rl --family p5", 0),
        ("recommend --params 70B --task qlora --compare-to {baseline} --fail-if-increase 1000%", 0),
        ("recommend --params 70B --task qlora --compare-to {baseline} --fail-if-pick-changes", 4),
        ("recommend --model llama-3-8b --task inference --max-tpot 30ms --mode offline --tokens-per-day 1B", 0),
        ("recommend --model mixtral-8x7b --task inference --requests-per-second 2", 0),
        ("recommend --model llama-3-8b --task inference --max-tpot 20ms --requests-per-second 4", 0),
        ("recommend --model llama-3-70b --task pretrain --tokens 15T --family p5", 0),
        ("recommend --params 70B --task pretrain --tokens 15T --max-instances 8 --horizon 1100d", 0),
        ("recommend --params 7B --task finetune --tokens 1B --family trn1", 0),
        ("recommend --params 7B --task rl --family p5 --algorithm ppo --reward model --reward-model 7B --placement split --async", 0),
        ("recommend --model llama-3-8b --task inference --concurrency 64 --max-batched-tokens 4096 --fail-if-over 100000", 0),
        ("recommend --model llama-3-8b --task inference --family inf2 --compiled-batch 8", 0),
        ("recommend --model llama-3-70b --task inference --family g6e --requests-per-second 2", 0),
        ("recommend --model llama-3-8b --task inference --requests-per-second 4 --speculative ngram:4:0.5 --family g6e", 0),
        # A hostile review's documents the corpus lacked: offline (no TPOT target), one-token outputs, mean targets, no family filter.
        ("recommend --model llama-3-8b --task inference --mode offline", 0),
        ("recommend --model llama-3-8b --task inference --output-tokens 1 --requests-per-second 2", 0),
        ("recommend --model llama-3-8b --task inference --requests-per-second 2 --slo-percentile mean", 0),
    ],
    "cost": [
        ("cost --params 70B --task qlora --data-region us-west-2", 0),
        ("cost --params 70B --task qlora --checkpoint-storage fsx-lustre", 0),
        ("cost --model llama-3-70b --task pretrain --tokens 1T --deadline 30d --data-region us-west-2", 0),
        ("cost --model llama-3-70b --task pretrain --tokens 1T", 0),
        ("cost --model llama-3-70b --task pretrain --tokens 1T --checkpoint-storage fsx-lustre", 0),  # bills with a working store
        ("cost --model llama-2-7b --task pretrain --tokens 50B --deadline 14d --cost-slack 0.2 --checkpoint-storage fsx-lustre", 0),
        ("cost --model llama-3-8b --task pretrain --tokens 50B --family p5 --checkpoint-storage fsx-lustre", 0),
        ("cost --model llama-3-8b --task pretrain --tokens 50B --family p5", 0),
        ("cost --instance p5.48xlarge --count 4 --hours 100", 0),
        ("cost --model llama-3-8b --task inference --requests-per-second 2", 0),
        ("cost --model llama-3-8b --task inference --mode offline --reasoning-tokens 300 --family g6e", 0),  # first_visible_s on the analytic path
        ("cost --model llama-3-8b --task inference --requests-per-second 2 --speculative mtp:2:0.6 --family g6e", 0),
        ("cost --params 7B --task rl --algorithm ppo --reward model --reward-model 7B --family p5", 0),
        ("cost --model llama-3-8b --task inference", 0),
        ("cost --model llama-3-8b --task inference --mode offline --tokens-per-day 1B", 0),
        ("cost --model llama-3-8b --task inference --output-tokens 1", 0),
        ("cost --model llama-3-8b --task inference --reasoning-tokens 500 --requests-per-second 2", 0),
        ("cost --model llama-3-8b --task inference --samples 3 --requests-per-second 2", 0),
        ("cost --model llama-3-8b --task inference --requests-per-second 2 --slo-percentile mean", 0),
        ("cost --model llama-3-8b --task pretrain --tokens 50B --instance p5.48xlarge --count 4", 0),
        ("cost --model llama-3-8b --task pretrain --tokens 50B --family p5 --compare-to {baseline}", 0),
        ("cost --model llama-3-8b --task pretrain --tokens 50B --family p5 --compare-to {baseline} --fail-if-pick-changes --fail-if-over 1e9", 4),
        ("cost --model llama-3-70b --task pretrain --tokens 20B --family p5 --pricing spot", 0),
        ("cost --params 70B --task pretrain --tokens 1T --pricing spot", 0),
        ("cost --params 70B --task pretrain --tokens 1T --pricing spot --checkpoint-storage fsx-lustre", 0),  # bills with a working store
        ("--catalog-add {commitments} cost --model llama-3-8b --task lora --family p5 --deadline 30d", 0),
        ("--catalog-add {commitments} cost --model llama-3-8b --task inference --family p5 --mode offline --tokens-per-day 20B --concurrency 64 --max-batched-tokens 4096", 0),
        ("--catalog-add {commitments} cost --model llama-3-8b --task inference --family inf2 --compiled-batch 8", 0),
        ("cost --model llama-3-70b --task pretrain --tokens 1T --family p5 --deadline 30d", 0),
        ("cost --model llama-3-8b --task lora --quota-vcpus p=192,g=0,inf=0,trn=0", 0),
        ("cost --model llama-3-8b --task lora --quota-vcpus 384", 0),
        ("cost --model llama-2-7b --task pretrain --tokens 50B --deadline 14d --cost-slack 0.2", 0),
        # QLoRA: each row says whether bf16 LoRA fits it, and the LoRA pick is an alternative.
        ("cost --model llama-3-70b --task qlora --family p5,p6-b200", 0),
        # An RL pick in Capacity Blocks when time is worth much: its on-demand alternative carries rl.
        ("cost --params 7B --task rl --family p4d --value-of-time 5000 --algorithm ppo", 0),
        ("cost --params 7B --task rl --family p5 --algorithm ppo --placement split --async", 0),
        ("cost --model llama-3-70b --task inference --family g6e --requests-per-second 2", 0),
    ],
    "estimate": [
        ("estimate --instance p5.48xlarge --params 7B --task lora", 0),
        ("estimate --task inference --instance g6e.xlarge --model llama-3-8b", 0),
        ("estimate --task inference --instance g6e.xlarge --model llama-3-8b --clients 16", 0),
        ("estimate --task inference --instance inf2.48xlarge --model mixtral-8x7b --requests-per-second 5", 0),  # targets_missed
        ("estimate --task inference --instance g6e.xlarge --model llama-3-8b --requests-per-second 5 --engine hf", 0),
        ("estimate --task inference --instance g6e.xlarge --model llama-3-8b --clients 16 --speculative mtp:3:0.7", 0),
        ("estimate --task inference --instance g6e.xlarge --model llama-3-8b --clients 16 --reasoning-tokens 300", 0),
        ("estimate --task inference --instance g6e.xlarge --model llama-3-8b --trace {trace}", 0),
        ("estimate --task inference --instance g6e.xlarge --model llama-3-8b --requests-per-second 2 --arrival gamma:2 --length-spread 0.5", 0),
        ("estimate --task inference --instance g6e.xlarge --model llama-3-8b --requests-per-second 2 --engine tgi-1 --max-waiting-tokens 10", 0),
        ("estimate --task inference --instance g6e.xlarge --model llama-3-8b --requests-per-second 1 --samples 4 --mode offline", 0),
        ("estimate --task rl --instance p5.48xlarge --count 2 --params 7B --placement split", 0),
        ("estimate --instance p5.48xlarge --count 8 --model llama-3-70b --task pretrain --tokens 1T", 0),
        ("estimate --task inference --instance p5.48xlarge --model mixtral-8x7b --max-tpot 50ms", 0),
        ("estimate --instance trn1.32xlarge --count 2 --params 7B --task finetune", 0),
        ("estimate --task inference --instance g6e.12xlarge --model llama-3-8b --requests-per-second 4 --concurrency 64 --max-batched-tokens 4096", 0),
        ("estimate --task inference --instance inf2.48xlarge --model llama-3-8b --compiled-batch 8", 0),
        ("estimate --task inference --instance p6-b200.48xlarge --model deepseek-v3 --weights fp8 --tp 8 --ep 8 --attention-dp 8 --engine trtllm --attention-dp-balance 60 --requests-per-second 1", 0),
        ("estimate --task rl --instance p5.48xlarge --count 2 --params 7B --algorithm ppo --reward model --reward-model 7B", 0),
    ],
    "catalog": [("catalog", 0), ("catalog --family p5", 0)],
    "catalog-show": [("catalog show p5.48xlarge", 0), ("catalog show p4d.24xlarge", 0), ("catalog show trn1.32xlarge", 0),
                     ("catalog show g6e.xlarge", 0)],
    "models": [("models", 0)],
    "catalog-validate": [("catalog validate {minimal}", 0), ("catalog validate --overlay {team}", 0)],
    "validate": [("validate", 0), ("validate --all", 0)],
    "calibrate": [("calibrate --leave-one-source-out", 0), ("calibrate --leave-one-family-out", 0), ("calibrate", 0)],
    "prices-import": [("prices import --offer-file {offer} --spot-advisor {advisor} --output {overlay}", 0),
                      ("prices import --offer-file {offer} --output {overlay}", 0)],
    "error": [
        ("recommend --params 13Q --task lora", 2),
        ("estimate --instance g5.2xlarge --count 1 --params 13B --task lora", 3),
        ("recommend --params 13B --task lora --budget 1", 3),
        ("estimate --task inference --instance g5.xlarge --model llama-3-70b", 3),
        ("frobnicate", 2),
        ("cost --model llama-3-8b --task inference --requests-per-second 2 --max-tpot 1ms", 3),
        ("estimate --task inference --instance p5.48xlarge --model llama-3-8b --batch 100000", 3),
    ],
}

# Objects whose keys are names (regions, source keys): one schema for every value.
MAPS = {
    "catalog-show": ["instance.prices", "sources", "accelerator.sources"],
    # By task and by metric: a measurements file holds whichever tasks and metrics it holds.
    "calibrate": ["leave_one_source_out_summary.by_task", "leave_one_source_out_summary.by_metric",
                  "leave_one_source_out_summary.in_sample.by_task", "leave_one_source_out_summary.in_sample.by_metric",
                  "leave_one_family_out_summary.by_task", "leave_one_family_out_summary.by_metric",
                  "leave_one_family_out_summary.in_sample.by_task", "leave_one_family_out_summary.in_sample.by_metric"],
}

# Fields no cheap command fills in, with the type the code gives them.
TYPES = {
    # A case predicted under one fit and not the other (a saturated simulation) has a null error there.
    "calibrate": {"leave_one_source_out_cases[].error_in_sample": ["number", "null"],
                  "leave_one_source_out_cases[].error_out_of_sample": ["number", "null"],
                  "leave_one_family_out_cases[].error_in_sample": ["number", "null"],
                  "leave_one_family_out_cases[].error_out_of_sample": ["number", "null"]},
    "error": {"error.ttft_s": ["number"], "error.tpot_s": ["number"]},
    # A replica whose share of a trace arrives at one instant has no rate or spread of gaps.
    "estimate": {"inference.at_load.load.requests_per_second": ["number", "null"], "inference.at_load.load.gap_cv": ["number", "null"]},
    # The on-demand alternative has every field of a row: a run past 182 days has no block length, a non-RL job no rl.
    "recommend": {"workload.attention_dp_balance_iters": ["integer", "null"], "workload.max_waiting_tokens": ["integer", "null"], "alternatives.on_demand.capacity.note": ["string"], "alternatives.on_demand.capacity.capacity_block_days": ["integer", "null"],
                  "alternatives.on_demand.rl": ["object", "null"], "alternatives.on_demand.channel_note": ["string", "null"],
                  "alternatives.cheapest.channel_note": ["string", "null"], "alternatives.fastest.channel_note": ["string", "null"],
                  "alternatives.lora.rl": ["object", "null"], "alternatives.lora.channel_note": ["string", "null"],
                  "alternatives.lora.capacity.note": ["string"], "alternatives.lora.costs.spot_expected_usd": ["number", "null"],
                  "alternatives.on_demand.bill": ["object", "null"]},
    "cost": {"workload.attention_dp_balance_iters": ["integer", "null"], "workload.max_waiting_tokens": ["integer", "null"], "alternatives.on_demand.bill.data_region": ["string", "null"], "alternatives.on_demand.bill.transfer_rate": ["object", "null"],
             "alternatives.on_demand.capacity.note": ["string"], "recommendation.batch_hours_per_day": ["number"],
             "alternatives.on_demand.channel_note": ["string", "null"],
             "alternatives.cheapest.channel_note": ["string", "null"], "alternatives.fastest.channel_note": ["string", "null"],
             "alternatives.lora.rl": ["object", "null"], "alternatives.lora.channel_note": ["string", "null"],
                  "alternatives.lora.capacity.note": ["string"], "alternatives.lora.costs.spot_expected_usd": ["number", "null"]},
}
# The fastest option without a known price: its money fields are null by definition, but typed as any row's.
for _command in ("recommend", "cost"):
    for _field in ("channel_cost_usd", "costs.ranked_usd", "costs.spot_usd", "costs.spot_expected_usd", "capacity.capacity_block_usd",
                   "bill.total_usd", "costs.ranked_usd_per_month", "costs.on_demand_usd_per_month", "costs.spot_usd_per_month",
                   "costs.usd_per_million_output_tokens"):  # the serving documents' money fields
        TYPES[_command]["alternatives.fastest_unpriced." + _field] = ["number", "null"]
    TYPES[_command]["alternatives.fastest_unpriced.rl"] = ["object", "null"]
    # The --pricing best pick beside a spot pick (p6-b300 in Capacity Blocks has no on-demand or spot rate): typed as any row's.
    for _field in ("costs.on_demand_usd", "costs.spot_usd", "costs.spot_expected_usd", "costs.on_demand_expected_usd"):
        TYPES[_command]["alternatives.other_channels." + _field] = ["number", "null"]
    TYPES[_command]["alternatives.other_channels.rl"] = ["object", "null"]
    TYPES[_command]["alternatives.other_channels.bill.data_region"] = ["string", "null"]
    TYPES[_command]["alternatives.other_channels.bill.transfer_rate"] = ["object", "null"]
    TYPES[_command]["recommendation.roomier_micro_batch"] = ["object", "null"]
    # The fastest option within the cost ceiling: any row's types (its fields seen null in the corpus included).
    for _field in ("costs.on_demand_usd", "costs.spot_usd", "costs.spot_expected_usd", "costs.on_demand_expected_usd",
                   "capacity.capacity_block_usd", "channel_cost_usd", "bill.total_usd"):
        TYPES[_command]["alternatives.fastest_within_cost_ceiling." + _field] = ["number", "null"]
    TYPES[_command]["alternatives.fastest_within_cost_ceiling.rl"] = ["object", "null"]
    TYPES[_command]["alternatives.fastest_within_cost_ceiling.channel_note"] = ["string", "null"]
    TYPES[_command]["alternatives.fastest_within_cost_ceiling.bill"] = ["object", "null"]
    TYPES[_command]["alternatives.fastest_within_cost_ceiling.bill.data_region"] = ["string", "null"]
    TYPES[_command]["alternatives.fastest_within_cost_ceiling.bill.transfer_rate"] = ["object", "null"]

# Money, rates and price dates are null when unknown (docs/json.md), whether or not the corpus met one.
UNKNOWN_IS_NULL = re.compile(r"(usd|_as_of$|^prices_as_of$)")
NEVER_NULL = {"value_of_time_usd_per_hour"}  # a setting, always given: not a price that may be unknown

KEEP = ("title", "description", "enum", "const", "pattern", "minimum", "maximum", "$schema", "$id")


def json_type(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def flatten(old):
    """One node from a hand-written node, its anyOf/oneOf branches merged."""
    if not isinstance(old, dict):
        return {}
    node = {k: v for k, v in old.items() if k not in ("anyOf", "oneOf")}
    types = set()
    if "type" in node:
        types |= set(node["type"] if isinstance(node["type"], list) else [node["type"]])
    for branch in old.get("anyOf", []) + old.get("oneOf", []):
        b = flatten(branch)
        if "type" in b:
            types |= set(b["type"] if isinstance(b["type"], list) else [b["type"]])
        for k, v in b.items():
            if k == "properties":
                props = node.setdefault("properties", {})
                for name, sub in v.items():
                    props[name] = merge_old(props.get(name), sub)
            elif k not in node and k != "type":
                node[k] = v
    if types:
        node["type"] = sorted(types)
    return node


def merge_old(a, b):
    if a is None:
        return b
    return {"anyOf": [a, b]}


class Inferrer:
    def __init__(self, name):
        self.name = name
        self.maps = set(MAPS.get(name, []))
        self.notes = []
        self.errors = []

    def infer(self, values, old, path):
        old = flatten(old)
        types = {json_type(v) for v in values}
        if "integer" in types and "number" in types:
            types.discard("integer")
        key = path.rsplit(".", 1)[-1].rstrip("[]")
        if UNKNOWN_IS_NULL.search(key) and key not in NEVER_NULL and types & {"number", "string"} and not path.startswith("catalog."):
            types.add("null")
        hand = [t for t in old.get("type", []) if t != "null"]
        if path in TYPES.get(self.name, {}):
            types |= set(TYPES[self.name][path])
        elif types == {"null"} and hand:
            types |= set(hand)  # a field the corpus saw only as null keeps its documented type
            self.notes.append(f"{self.name}: {path} seen only as null; kept the hand type {hand}")
        elif types == {"null"}:
            self.errors.append(f"{self.name}: {path} seen only as null and untyped: add a case or a TYPES entry")
        node = {k: old[k] for k in KEEP if k in old}
        if "enum" in node and "null" in types and None not in node["enum"]:
            node["enum"] = node["enum"] + [None]
        if "const" not in node:
            node["type"] = sorted(types)[0] if len(types) == 1 else sorted(types)
        objects = [v for v in values if isinstance(v, dict)]
        arrays = [v for v in values if isinstance(v, list)]
        if objects:
            self.object(node, objects, old, path)
        if arrays:
            items = [x for a in arrays for x in a]
            if items:
                node["items"] = self.infer(items, old.get("items"), path + "[]")
            elif "items" in old:
                node["items"] = old["items"]
            elif path.endswith("warnings") or path.endswith("notes"):
                node["items"] = {"type": "string"}
            else:
                self.errors.append(f"{self.name}: {path} seen only empty: items untyped")
        return node

    def object(self, node, objects, old, path):
        if path in self.maps:
            every = [v for o in objects for v in o.values()]
            node["additionalProperties"] = self.infer(every, old.get("additionalProperties"), path + ".*")
            return
        keys = []
        for o in objects:
            keys += [k for k in o if k not in keys]
        old_props = old.get("properties", {})
        props = {}
        for k in keys:
            props[k] = self.infer([o[k] for o in objects if k in o], old_props.get(k), f"{path}.{k}" if path else k)
        for k, sub in old_props.items():
            if k not in props:
                props[k] = sub
                self.notes.append(f"{self.name}: {path}.{k} documented but not seen; kept as written")
        node["required"] = [k for k in keys if all(k in o for o in objects)]
        node["properties"] = props
        node["additionalProperties"] = False


def run(binary, args, code, files):
    argv = [binary] + args.format(**files).split() + ["--format", "json"]
    env = dict(os.environ, GPUADVISOR_TODAY="2026-12-01", XDG_CACHE_HOME="/nonexistent-gpuadvisor-cache")
    p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=files["dir"])
    if p.returncode != code:
        sys.exit(f"{args}: exit {p.returncode}, expected {code}\n{p.stderr}")
    return json.loads(p.stdout)


def main():
    binary = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or list(CORPUS)
    tmp = f"/tmp/gpuadvisor-make-schemas-{os.getpid()}"
    os.makedirs(tmp)
    files = {"dir": tmp, "offer": os.path.join(TESTS, "prices", "offer_ec2.json"),
             "advisor": os.path.join(TESTS, "prices", "spot_advisor.json"), "overlay": os.path.join(tmp, "overlay.json"),
             "baseline": os.path.join(tmp, "baseline.json"), "minimal": os.path.join(TESTS, "minimal_catalog.json"),
             "team": os.path.join(TESTS, "overlay_team.json"), "trace": os.path.join(TESTS, "trace_chat.jsonl"),
             "commitments": os.path.join(tmp, "commitments.json")}
    with open(files["baseline"], "w") as f:
        json.dump(run(binary, "cost --model llama-3-8b --task pretrain --tokens 40B --family p5", 0, files), f)
    notes, errors = [], []
    if "{commitments}" in json.dumps(CORPUS):
        subprocess.run([binary, "prices", "import", "--offer-file", os.path.join(TESTS, "prices", "offer_ec2.json"), "--savings-plans-file",
                        os.path.join(TESTS, "prices", "savings_plans.json"), "--spot-advisor", files["advisor"], "--as-of", "2026-11-30",
                        "--output", files["commitments"]], check=True, capture_output=True,
                       env=dict(os.environ, GPUADVISOR_TODAY="2026-12-01"))
    for name in names:
        path = os.path.join(SCHEMA_DIR, f"{name}.schema.json")
        old = json.load(open(path)) if os.path.exists(path) else {}
        docs = [run(binary, a, c, files) for a, c in CORPUS[name]]
        inf = Inferrer(name)
        schema = inf.infer(docs, old, "")
        schema = {k: schema[k] for k in ("$schema", "$id", "title", "description") if k in schema} | \
                 {k: v for k, v in schema.items() if k not in ("$schema", "$id", "title", "description")}
        schema.setdefault("$schema", "http://json-schema.org/draft-07/schema#")
        with open(path, "w") as f:
            json.dump(schema, f, indent=1, ensure_ascii=True)
            f.write("\n")
        notes += inf.notes
        errors += inf.errors
    for n in notes + errors:
        print(n, file=sys.stderr)
    for f in os.listdir(tmp):
        os.remove(os.path.join(tmp, f))
    os.rmdir(tmp)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
