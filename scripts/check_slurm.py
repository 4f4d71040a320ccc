#!/usr/bin/env python3
"""Submits the emitted Slurm scripts to a real Slurm controller (issue 36:
tests with the real tools).

   scripts/check_slurm.py BUILD/gpuadvisor          the check
   scripts/check_slurm.py BUILD/gpuadvisor --self-test   shows it refuses a script the cluster cannot hold

A throwaway cluster runs on this machine, every file under one temporary
directory: munged on its own socket and key, slurmctld and slurmd on free ports
as the current user (so two checks can run at once). It holds the local node (its CPUs, 8 GPUs
declared as files) and 128 nodes of 8 GPUs declared idle that never start (enough for
every pick below; `sbatch --test-only` places jobs on them without running
anything). The placeholder reservation the files name (YOUR_SLURM_RESERVATION)
is created on half of those nodes, as a user would create theirs; the other
half take the jobs that name none.

For each pick: every *.sbatch file must pass `sbatch --test-only` (the node,
task, CPU and GPU requests are accepted). The one-instance service also runs
for real on the local node, its engine command replaced by a stub that checks
its arguments and the GPUs Slurm gave it. Slurm's daemons and munge come from
Debian's slurmctld, slurmd, slurm-client and munge, installed by
scripts/test.sh; a missing tool is a failure, not a skip.
"""
import getpass
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

PICKS = {
    "train": "recommend --params 70B --task pretrain --tokens 1T --deadline 30d --exclude trn1",
    "train-od": "recommend --params 8B --task pretrain --tokens 20B --family p5 --max-instances 2",
    "rl": "recommend --params 7B --task rl",
    "serve": "recommend --model llama-3-8b --task inference --requests-per-second 5 --family g6e",
    # Two replicas of TP4 on each p4d.24xlarge: one array task per instance, an engine per replica.
    "serve-packed": "recommend --model llama-3-8b --task inference --requests-per-second 60 --family p4d",
    "serve-moe": "recommend --model deepseek-v3 --task inference --requests-per-second 5 --family p5",  # two instances a replica
}
RUN_FOR_REAL = ("serve", "serve-packed")
TOOLS = ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "sinfo", "scontrol", "squeue")


def fail(message):
    print("check_slurm: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def tool(name):
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if not path:
        fail(f"{name} not found (Debian packages slurmctld slurmd slurm-client munge; scripts/test.sh installs them)")
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(root, host, user):
    os.makedirs(f"{root}/state")
    os.makedirs(f"{root}/spool")
    os.makedirs(f"{root}/dev")
    for i in range(8):
        open(f"{root}/dev/gpu{i}", "w").close()
    cpus = os.cpu_count() or 1
    with open(f"{root}/slurm.conf", "w") as f:
        f.write(f"""ClusterName=gpuadvisor-check
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
AuthInfo=socket={root}/munge/munge.sock
CredType=cred/munge
SlurmUser={user}
SlurmdUser={user}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=1000 Gres=gpu:8 State=UNKNOWN
NodeName=idle[1-128] NodeAddr=127.0.0.2 CPUs=256 RealMemory=2000000 Gres=gpu:8 State=IDLE
PartitionName=check Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
    with open(f"{root}/gres.conf", "w") as f:
        f.write(f"NodeName={host} Name=gpu File={root}/dev/gpu[0-7]\nNodeName=idle[1-128] Name=gpu Count=8\n")


class Cluster:
    def __init__(self):
        for t in TOOLS:
            tool(t)
        self.root = tempfile.mkdtemp(prefix="gpuadvisor-slurm-")
        self.host = socket.gethostname().split(".")[0]
        self.env = dict(os.environ, SLURM_CONF=f"{self.root}/slurm.conf")
        write_config(self.root, self.host, getpass.getuser())
        m = f"{self.root}/munge"
        os.makedirs(m, mode=0o700)
        subprocess.run([tool("mungekey"), "-c", "-k", f"{m}/munge.key"], check=True)
        os.chmod(f"{m}/munge.key", 0o600)
        subprocess.run([tool("munged"), "--force", "-S", f"{m}/munge.sock", f"--key-file={m}/munge.key",
                        f"--log-file={m}/munged.log", f"--pid-file={m}/munged.pid", f"--seed-file={m}/seed"], check=True)
        subprocess.run([tool("slurmctld"), "-c", "-i"], env=self.env, check=True)
        subprocess.run([tool("slurmd"), "-N", self.host], env=self.env, check=True)
        self.wait_for_local_node()
        self.run("scontrol", "create", "reservation", "ReservationName=YOUR_SLURM_RESERVATION", "Nodes=idle[1-64]",
                 "StartTime=now", "Duration=infinite", f"Users={getpass.getuser()}", "Flags=ignore_jobs")

    def run(self, *args, check=True):
        r = subprocess.run([tool(args[0]), *args[1:]], env=self.env, capture_output=True, text=True)
        if check and r.returncode != 0:
            fail(f"{' '.join(args)}: {r.stderr.strip()}\n{self.logs()}")
        return r

    def logs(self):
        out = ""
        for name in ("slurmctld.log", "slurmd.log"):
            path = f"{self.root}/{name}"
            if os.path.exists(path):
                out += f"--- {name} (last lines)\n" + "".join(open(path).readlines()[-15:])
        return out

    def wait_for_local_node(self):
        for _ in range(60):
            r = self.run("sinfo", "-h", "-n", self.host, "-o", "%T", check=False)
            if r.stdout.strip().startswith("idle"):
                return
            time.sleep(0.5)
        fail(f"the local node never came up\n{self.logs()}")

    def stop(self):
        for pidfile in ("slurmd.pid", "slurmctld.pid", "munge/munged.pid"):
            try:
                os.kill(int(open(f"{self.root}/{pidfile}").read().strip()), signal.SIGTERM)
            except (OSError, ValueError):
                pass
        time.sleep(1)
        shutil.rmtree(self.root, ignore_errors=True)


def emit(binary, args, out):
    r = subprocess.run([binary, "-q", *args.split(), "--emit", "slurm", "--emit-dir", out], capture_output=True, text=True,
                       env=dict(os.environ, GPUADVISOR_TODAY="2026-12-01", XDG_CACHE_HOME="/nonexistent-gpuadvisor-cache"))
    if r.returncode != 0:
        fail(f"gpuadvisor {args} --emit slurm exited {r.returncode}: {r.stderr.strip()}")
    scripts = sorted(glob.glob(f"{out}/*.sbatch"))
    if not scripts:
        fail(f"gpuadvisor {args} wrote no *.sbatch")
    return scripts


def test_only(cluster, script):
    r = cluster.run("sbatch", "--test-only", script, check=False)
    return r.returncode == 0, (r.stderr + r.stdout).strip()


# The stub stands in for the engine: it checks the command line it was given
# and that Slurm bound the GPUs the script asked for, then says so. Given
# `bash -c SCRIPT` (several replicas on one instance), it runs the script with
# a `vllm` stand-in on PATH that records each engine's devices and port, then
# checks every engine had as many devices as its --tensor-parallel-size, none
# shared, all of the step's used, and a port of its own.
STUB = """#!/bin/bash
want_gpus=$1; shift
echo "stub: $*"
n=${SLURM_GPUS_ON_NODE:-0}
[ "$n" = "$want_gpus" ] || { echo "stub: Slurm gave the step $n GPUs (SLURM_GPUS_ON_NODE), want $want_gpus" >&2; exit 1; }
if [ "$1" = bash ] && [ "$2" = -c ]; then
  shim=$(mktemp -d)
  cat > "$shim/vllm" <<'ENGINE'
#!/bin/bash
tp=$(printf '%s\\n' "$@" | grep -A1 -x -- --tensor-parallel-size | tail -1)
port=$(printf '%s\\n' "$@" | grep -A1 -x -- --port | tail -1)
devices=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' ' ' | wc -w)
[ "$1" = serve ] && [ "$tp" = "$devices" ] || { echo "stub: engine with --tensor-parallel-size $tp on devices '$CUDA_VISIBLE_DEVICES'" >&2; exit 1; }
echo "$port $CUDA_VISIBLE_DEVICES" >> "$ENGINE_LOG"
ENGINE
  chmod +x "$shim/vllm"
  export ENGINE_LOG=$shim/engines
  PATH=$shim:$PATH bash -c "$3"
  engines=$(wc -l < "$ENGINE_LOG")
  ports=$(cut -d' ' -f1 "$ENGINE_LOG" | sort -u | wc -l)
  used=$(cut -d' ' -f2 "$ENGINE_LOG" | tr ',' '\\n' | sort -u | wc -l)
  all=$(cut -d' ' -f2 "$ENGINE_LOG" | tr ',' '\\n' | wc -l)
  [ "$engines" -gt 1 ] && [ "$ports" = "$engines" ] && [ "$used" = "$all" ] && [ "$used" = "$want_gpus" ] ||
    { echo "stub: $engines engines, $ports ports, $all devices of which $used distinct, want $want_gpus:" >&2; cat "$ENGINE_LOG" >&2; exit 1; }
  echo "stub: ok ($engines engines on $used GPUs, job ${SLURM_JOB_ID:-?} task ${SLURM_ARRAY_TASK_ID:-?})"
  exit 0
fi
[ "$1" = vllm ] && [ "$2" = serve ] || { echo "stub: not a vllm serve command" >&2; exit 1; }
tp=$(printf '%s\\n' "$@" | grep -A1 -x -- --tensor-parallel-size | tail -1)
[ "$tp" = "$want_gpus" ] || { echo "stub: --tensor-parallel-size $tp, the script asks for $want_gpus GPUs" >&2; exit 1; }
echo "stub: ok ($n GPUs, job ${SLURM_JOB_ID:-?} task ${SLURM_ARRAY_TASK_ID:-?})"
"""


def run_for_real(cluster, script, work):
    text = open(script).read()
    gpus = re.search(r"^#SBATCH --gpus-per-node=(\d+)$", text, re.M)
    if not gpus:
        fail(f"{script}: no --gpus-per-node")
    stub = f"{work}/engine-stub.sh"
    with open(stub, "w") as f:
        f.write(STUB)
    os.chmod(stub, 0o755)
    if "srun --container-image=YOUR_IMAGE " not in text:
        fail(f"{script}: no 'srun --container-image=YOUR_IMAGE' line to stand the stub in for")
    text = text.replace("srun --container-image=YOUR_IMAGE ", f"srun {stub} {gpus.group(1)} ")
    # One node of this machine: its own memory, not the instance's.
    text = text.replace("#SBATCH --mem=0", "#SBATCH --mem=100")
    local = f"{work}/local.sbatch"
    with open(local, "w") as f:
        f.write(text)
    r = cluster.run("sbatch", "--parsable", f"--chdir={work}", f"--nodelist={cluster.host}", local)
    job = r.stdout.strip().split(";")[0]
    for _ in range(120):
        if not cluster.run("squeue", "-h", "-j", job, check=False).stdout.strip():
            break
        time.sleep(0.5)
    else:
        cluster.run("scontrol", "cancel", job, check=False)
        fail(f"job {job} did not finish in 60 s\n{cluster.logs()}")
    outputs = glob.glob(f"{work}/*{job}*.out")
    output = "".join(open(p).read() for p in outputs)
    if "stub: ok" not in output:
        fail(f"the real run of {script} did not reach the stub's check:\n{output}\n{cluster.logs()}")
    print(f"  ran for real: {output.strip().splitlines()[-1]}")


def main():
    if len(sys.argv) < 2:
        fail("usage: check_slurm.py BUILD/gpuadvisor [--self-test]")
    binary = os.path.abspath(sys.argv[1])
    self_test = "--self-test" in sys.argv[2:]
    cluster = Cluster()
    work = tempfile.mkdtemp(prefix="gpuadvisor-slurm-files-")
    try:
        if self_test:
            scripts = emit(binary, PICKS["serve"], f"{work}/serve")
            bad = f"{work}/too-many-gpus.sbatch"
            text = re.sub(r"^#SBATCH --gpus-per-node=\d+$", "#SBATCH --gpus-per-node=9", open(scripts[0]).read(), flags=re.M)
            open(bad, "w").write(text)
            ok, message = test_only(cluster, bad)
            if ok:
                fail(f"a script asking for 9 GPUs a node was accepted by a cluster of 8-GPU nodes: {message}")
            print(f"check_slurm: refused as it should be: {message}")
            return
        for name, args in PICKS.items():
            for script in emit(binary, args, f"{work}/{name}"):
                ok, message = test_only(cluster, script)
                if not ok:
                    nodes = cluster.run("sinfo", "-N", "-h", "-o", "%N %T %c %G", check=False).stdout
                    fail(f"{name}: sbatch --test-only {os.path.basename(script)}: {message}\nnodes:\n{nodes}")
                print(f"check_slurm: {name}/{os.path.basename(script)}: {message}")
                if name in RUN_FOR_REAL:
                    run_for_real(cluster, script, f"{work}/{name}")
        print("check_slurm: every emitted Slurm script was accepted")
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
