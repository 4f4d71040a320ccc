#!/usr/bin/env python3
"""Emits the Kubernetes files of a set of picks and checks every object in
them against the Kubernetes API's types, field names included (issue 36:
tests with the real tools).

   scripts/check_k8s.py BUILD/gpuadvisor     the check
   scripts/check_k8s.py --self-test          shows it refuses a misspelt field, a wrong
                                             type, a missing required field and a CRD error
   scripts/check_k8s.py --vendor CRD.yaml SOURCE_URL TAG COMMIT
                                             prints a CRD's schema as tests/data/k8s/ holds it

Plain deserialisation ignores fields it does not know, so a misspelt field
(`nodeSelecter`) would pass it and be dropped by the API server. This check
walks each object instead:
- built-in kinds (Deployment, Service, HorizontalPodAutoscaler, ConfigMap)
  against the Kubernetes Python client's models (Debian's python3-kubernetes):
  every key must be in the model's attribute map, every value of the model's
  type; then the client builds the object, which refuses a missing required
  field;
- custom resources (LeaderWorkerSet, PyTorchJob) against the OpenAPI v3 schema
  of their published CRDs (tests/data/k8s/, each naming its source, release
  and commit): a key the schema does not name is refused, as the API server's
  pruning would drop it; types, enums and required fields are checked; the
  object's own metadata is checked as ObjectMeta.

python3-kubernetes 22.6 (Debian 12) carries the API of Kubernetes 1.22, which
serves autoscaling/v2 as v2beta2: autoscaling/v2 (GA in 1.23) has the same
fields, so an autoscaling/v2 object is walked against the v2beta2 models.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_picks import PICKS  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CRD_DIR = os.path.join(HERE, "..", "tests", "data", "k8s")
BUILT_IN = {
    ("apps/v1", "Deployment"): "V1Deployment",
    ("v1", "Service"): "V1Service",
    ("v1", "ConfigMap"): "V1ConfigMap",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "V2beta2HorizontalPodAutoscaler",
}
CUSTOM = {
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"): "leaderworkerset.x-k8s.io_v1.json",
    ("kubeflow.org/v1", "PyTorchJob"): "kubeflow.org_v1_pytorchjob.json",
}
# The client types these Quantity fields as str; the API takes a number or a string.
QUANTITY = {("V1ResourceRequirements", "limits"), ("V1ResourceRequirements", "requests"),
            ("V1EmptyDirVolumeSource", "size_limit")}
# Every kind the picks must produce between them: a pick that drifts (a
# multi-node service that now fits one instance) fails the check, not a skip.
EXPECTED_KINDS = {"PyTorchJob", "Deployment", "Service", "HorizontalPodAutoscaler", "LeaderWorkerSet"}


def client():
    try:
        import kubernetes.client as k  # python3-kubernetes
        return k
    except ImportError:
        print("FAIL: python3-kubernetes is not installed for this Python (scripts/test.sh installs it: apt-get install python3-kubernetes)")
        sys.exit(1)


def scalar_ok(value, type_name):
    if type_name == "str":
        return isinstance(value, str)
    if type_name == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if type_name == "bool":
        return isinstance(value, bool)
    if type_name == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return True  # 'object' (int-or-string and the like), 'datetime'


def walk_model(k, value, type_name, path, errors, owner=None):
    """Walks value against the client's type name ('V1Container', 'list[V1EnvVar]', 'dict(str, str)', 'int' ...)."""
    m = re.fullmatch(r"list\[(.+)\]", type_name)
    if m:
        if not isinstance(value, list):
            return errors.append(f"{path}: a list expected, got {type(value).__name__}")
        for i, v in enumerate(value):
            walk_model(k, v, m.group(1), f"{path}[{i}]", errors)
        return
    m = re.fullmatch(r"dict\(str, (.+)\)", type_name)
    if m:
        if not isinstance(value, dict):
            return errors.append(f"{path}: a map expected, got {type(value).__name__}")
        inner = "object" if owner in QUANTITY else m.group(1)
        for key, v in value.items():
            walk_model(k, v, inner, f"{path}.{key}", errors)
        return
    model = getattr(k, type_name, None)
    if model is None:
        if owner in QUANTITY and isinstance(value, (int, float)) and not isinstance(value, bool):
            return
        if not scalar_ok(value, type_name):
            errors.append(f"{path}: {type_name} expected, got {value!r}")
        return
    if not isinstance(value, dict):
        return errors.append(f"{path}: an object ({type_name}) expected, got {value!r}")
    by_json_name = {json_name: attr for attr, json_name in model.attribute_map.items()}
    for key, v in value.items():
        attr = by_json_name.get(key)
        if attr is None:
            errors.append(f"{path}.{key}: not a field of {type_name} (its fields: {', '.join(sorted(by_json_name))})")
            continue
        walk_model(k, v, model.openapi_types[attr], f"{path}.{key}", errors, owner=(type_name, attr))


def build_model(k, obj, type_name, path, errors):
    """The client's own constructor: it refuses a required field left out."""
    try:
        k.ApiClient()._ApiClient__deserialize(obj, type_name)
    except (ValueError, TypeError) as e:
        errors.append(f"{path}: {type_name}: {e}")


SCHEMA_TYPES = {"string": str, "integer": int, "boolean": bool, "object": dict, "array": list}


def walk_schema(k, value, schema, path, errors):
    """Walks value against an OpenAPI v3 (structural CRD) schema."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return
    if schema.get("x-kubernetes-int-or-string"):
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            errors.append(f"{path}: an integer or a string expected, got {value!r}")
        return
    kind = schema.get("type")
    if kind == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif kind in SCHEMA_TYPES:
        ok = isinstance(value, SCHEMA_TYPES[kind]) and not (kind == "integer" and isinstance(value, bool))
    else:
        ok = True
    if not ok:
        return errors.append(f"{path}: {kind} expected, got {value!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if kind == "array":
        for i, v in enumerate(value):
            walk_schema(k, v, schema.get("items", {}), f"{path}[{i}]", errors)
    if kind == "object":
        walk_object_schema(k, value, schema, path, errors)


def walk_object_schema(k, value, schema, path, errors):
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    for field in schema.get("required", []):
        if field not in value:
            errors.append(f"{path}.{field}: required and missing")
    for key, v in value.items():
        if props is not None and key in props:
            walk_schema(k, v, props[key], f"{path}.{key}", errors)
        elif isinstance(extra, dict):
            walk_schema(k, v, extra, f"{path}.{key}", errors)
        elif extra is not True:
            named = ", ".join(sorted(props)) if props else "none"
            errors.append(f"{path}.{key}: not in the CRD's schema, the API server would drop it (fields there: {named})")


def load_crd_schema(file_name):
    with open(os.path.join(CRD_DIR, file_name)) as f:
        return json.load(f)["openAPIV3Schema"]


def check_object(k, obj, where):
    """The errors of one Kubernetes object, as 'where: path: why'."""
    key = (obj.get("apiVersion"), obj.get("kind"))
    errors = []
    if key in BUILT_IN:
        walk_model(k, obj, BUILT_IN[key], obj["kind"], errors)
        if not errors:
            build_model(k, obj, BUILT_IN[key], obj["kind"], errors)
    elif key in CUSTOM:
        body = {f: v for f, v in obj.items() if f != "metadata"}
        walk_schema(k, body, load_crd_schema(CUSTOM[key]), obj["kind"], errors)
        walk_model(k, obj.get("metadata", {}), "V1ObjectMeta", f"{obj['kind']}.metadata", errors)
    else:
        errors.append(f"apiVersion {key[0]} kind {key[1]}: not a kind this check knows (add its model or CRD)")
    return [f"{where}: {e}" for e in errors]


def check_file(k, path):
    import yaml  # python3-yaml

    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    errors, kinds = [], []
    for i, doc in enumerate(docs):
        kinds.append(doc.get("kind"))
        errors += check_object(k, doc, f"{os.path.basename(path)}#{i}")
    return errors, kinds


def emit_and_check(binary, tmp):
    k = client()
    ok, seen, objects = True, set(), 0
    for name, args in PICKS.items():
        d = os.path.join(tmp, name)
        r = subprocess.run([binary] + args.split() + ["--emit", "k8s", "--emit-dir", d], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL: {args} --emit k8s exited {r.returncode}: {r.stderr.strip()[-400:]}")
            ok = False
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith((".yaml", ".yml")):
                errors, kinds = check_file(k, os.path.join(d, f))
                for e in errors:
                    print(f"FAIL: {name}: {e}")
                ok &= not errors
                seen |= set(kinds)
                objects += len(kinds)
    missing = EXPECTED_KINDS - seen
    if missing:
        print(f"FAIL: no pick emitted {', '.join(sorted(missing))}: scripts/launch_picks.py no longer covers every kind")
        ok = False
    if ok:
        print(f"{objects} Kubernetes objects checked ({', '.join(sorted(seen))})")
    return ok


def self_test():
    """Each bad object must be refused with the reason named; a good one must pass."""
    k = client()
    pod = {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 8}}}]}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": pod}}}
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "x"},
           "spec": {"nprocPerNode": "8", "pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": pod}}}}}
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": {"name": "x"},
           "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": pod}}}}

    def bad(obj, path, change):
        obj = json.loads(json.dumps(obj))
        node = obj
        for p in path[:-1]:
            node = node[p]
        change(node, path[-1])
        return obj

    cases = [
        ("a good Deployment", deployment, None),
        ("a good PyTorchJob", job, None),
        ("a good LeaderWorkerSet", lws, None),
        ("a misspelt field", bad(deployment, ["spec", "template", "spec", "nodeSelector"],
                                 lambda n, f: n.__setitem__("nodeSelecter", {"a": "b"})), "nodeSelecter"),
        ("a wrong type", bad(deployment, ["spec", "replicas"], lambda n, f: n.__setitem__(f, "2")), "replicas"),
        ("a missing required field", bad(deployment, ["spec", "selector"], lambda n, f: n.pop(f)), "selector"),
        ("a misspelt CRD field", bad(job, ["spec", "nprocPerNode"], lambda n, f: n.__setitem__("nprocsPerNode", "8")), "nprocsPerNode"),
        ("a CRD type error", bad(job, ["spec", "nprocPerNode"], lambda n, f: n.__setitem__(f, 8)), "nprocPerNode"),
        ("a misspelt field in a CRD's pod", bad(job, ["spec", "pytorchReplicaSpecs", "Master", "template", "spec", "containers"],
                                                lambda n, f: n[f][0].__setitem__("imagePullPolcy", "Always")), "imagePullPolcy"),
        ("a CRD enum", bad(lws, ["spec", "startupPolicy"], lambda n, f: n.__setitem__(f, "LeaderSometimes")), "startupPolicy"),
        ("a CRD's required field", bad(lws, ["spec", "leaderWorkerTemplate", "workerTemplate"], lambda n, f: n.pop(f)), "workerTemplate"),
        ("a misspelt field in metadata", bad(lws, ["metadata", "name"], lambda n, f: n.__setitem__("labls", {})), "labls"),
    ]
    ok = True
    for label, obj, must_name in cases:
        errors = check_object(k, obj, label)
        if must_name is None and errors:
            print(f"FAIL: {label} was refused: {errors}")
            ok = False
        elif must_name is not None and not any(must_name in e for e in errors):
            print(f"FAIL: {label} passed the check (errors: {errors})")
            ok = False
    print("the check refuses each bad object and passes the good ones" if ok else "")
    return ok


def strip_descriptions(node):
    if isinstance(node, dict):
        return {k: strip_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [strip_descriptions(v) for v in node]
    return node


def vendor(crd_path, source, tag, commit):
    import yaml

    with open(crd_path) as f:
        crd = yaml.safe_load(f)
    version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    out = {"source": source, "release": tag, "commit": commit, "license": "Apache-2.0",
           "note": "spec.versions[" + version["name"] + "].schema.openAPIV3Schema of the published CRD, "
                   "descriptions removed (scripts/check_k8s.py --vendor)",
           "openAPIV3Schema": strip_descriptions(version["schema"]["openAPIV3Schema"])}
    print(json.dumps(out, sort_keys=True, separators=(",", ":")))


def main():
    args = sys.argv[1:]
    if args[:1] == ["--vendor"] and len(args) == 5:
        return vendor(*args[1:])
    if args == ["--self-test"]:
        sys.exit(0 if self_test() else 1)
    if len(args) != 1:
        print(__doc__)
        sys.exit(2)
    tmp = tempfile.mkdtemp(prefix="gpuadvisor-k8s-check-")
    try:
        sys.exit(0 if emit_and_check(args[0], tmp) else 1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
