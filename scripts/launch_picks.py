"""The picks whose launch files the checks emit (scripts/check_launch_files.py,
scripts/check_k8s.py): one of each kind the emitter writes. A Capacity Block
training job, an on-demand one, RL colocated and split, a one-instance service,
replicas sharing instances and a multi-node one (a LeaderWorkerSet on Kubernetes; the leader waits for its
workers). check_k8s.py fails when the picks no longer produce every kind."""
PICKS = {
    "train": "recommend --params 70B --task pretrain --tokens 1T --deadline 30d --exclude trn1",
    "train-od": "recommend --params 8B --task pretrain --tokens 20B --family p5 --max-instances 2",
    "rl": "recommend --params 7B --task rl",
    "rl-split": "recommend --params 7B --task rl --placement split --family p5",
    "serve": "recommend --model llama-3-8b --task inference --requests-per-second 20",
    # Two replicas of TP4 on each p4d.24xlarge: a pod per replica, an engine per replica in a Slurm task.
    "serve-packed": "recommend --model llama-3-8b --task inference --requests-per-second 60 --family p4d",
    # DeepSeek-V3 in fp8 (671 GB) needs two p5.48xlarge (8 x 80 GB) per replica.
    "serve-multinode": "recommend --model deepseek-v3 --task inference --requests-per-second 5 --family p5",
}
