"""profiles/slurm against a real scheduler: a single-node SLURM cluster (tests/slurm/cluster.sh) runs the smallest
complete config to the end, its fold jobs submitted by sbatch one by one, as an array and as one group job.

Installing Debian's SLURM and munge packages and starting their daemons changes the machine, so these tests run only
where ``ENKCVS_TEST_SLURM=1`` asks for it (``.ci/run`` sets it); otherwise they are skipped with that reason. They need
root (or the packages installed) to start the cluster, and are skipped with the reason where SLURM cannot be
installed. Every Snakemake call is bounded by ``timeout`` (a status query that never answers must not hang CI).
"""

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CLUSTER = REPO / "tests" / "slurm" / "cluster.sh"
PROFILE = REPO / "profiles" / "slurm"
pytestmark = [pytest.mark.workflow, pytest.mark.slurm]

# Without slurmdbd there is no sacct: follow jobs with squeue (the cluster keeps finished jobs listed for 10 minutes),
# and check them every second instead of the plugin's cluster-friendly 40 s.
TEST_CLUSTER_ARGS = [
    "--slurm-status-command",
    "squeue",
    "--slurm-init-seconds-before-status-checks",
    "1",
    "--seconds-between-status-checks",
    "1",
]
SUBMITTED = re.compile(r"has been submitted with SLURM jobid (\d+) \(log: (\S+)\)")
SUBMITTED_ARRAY = re.compile(r"Submitted array job with Snakemake IDs \S+ and SLURM job ID (\d+)")


#: The environment variable that lets these tests install and start SLURM on the machine.
OPT_IN = "ENKCVS_TEST_SLURM"


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    """A running single-node cluster with one fake GPU; its daemons are stopped afterwards."""
    if os.environ.get(OPT_IN) != "1":
        pytest.skip(
            f"starts a SLURM cluster on this machine (installing its packages as root): set {OPT_IN}=1 to run it"
        )
    state = tmp_path_factory.mktemp("slurm-state")
    started = subprocess.run(
        ["timeout", "-k", "5", "300", str(CLUSTER), "start", str(state)], capture_output=True, text=True, check=False
    )
    if started.returncode == 3:
        pytest.skip(started.stderr.strip())
    assert started.returncode == 0, started.stdout + started.stderr
    yield state
    stopped = subprocess.run(
        ["timeout", "-k", "5", "60", str(CLUSTER), "stop", str(state)], capture_output=True, text=True, check=False
    )
    assert stopped.returncode == 0, stopped.stderr
    for daemon in ("slurmctld", "slurmd"):
        pid = state / f"{daemon}.pid"
        assert not pid.exists(), f"{daemon} was not stopped"


def run_profile(run_snakemake, workdir: Path, config: Path, *args: str) -> subprocess.CompletedProcess:
    """``snakemake --profile profiles/slurm`` on the test cluster, killed after 10 minutes (a status query that never
    answers must not hang CI)."""
    done = run_snakemake(workdir, *args, "--profile", str(PROFILE), *TEST_CLUSTER_ARGS, config=config, timeout=600)
    assert done.returncode == 0, done.stderr[-6000:]
    return done


def slurm_jobs() -> dict[str, tuple[str, str]]:
    """Every job the cluster still lists: id -> (comment, state); array tasks as '<job>_<task>'."""
    listed = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i|%k|%T"], capture_output=True, text=True, check=True)
    return {job: (comment, state) for job, comment, state in (line.split("|") for line in listed.stdout.splitlines())}


def requested_gpus(job_id: str) -> str:
    """The job's per-job trackable resources, e.g. 'gres:gpu:fake:1' ('' when it asked for none)."""
    shown = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True, check=True).stdout
    match = re.search(r"TresPerJob=(\S+)", shown)
    return match[1] if match else ""


@pytest.fixture(scope="module")
def slurm_run(slurm_cluster, tmp_path_factory, run_snakemake):
    """The resume test's config (K = 2, M = 2: four fold jobs, 3 epochs each) on one fake GPU per training job, as a
    profile asks for it (resources), run to the end. Torch sees no fake GPU, so the training jobs are allowed to fall
    back to the CPU, and say so in their logs."""
    workdir = tmp_path_factory.mktemp("slurm-run")
    config = yaml.safe_load((REPO / "tests" / "config" / "resume.yaml").read_text())
    config["datasets"]["digits"]["recipe"]["epochs"] = 3
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    done = run_profile(run_snakemake, workdir, workdir / "config.yaml", *GPU_RESOURCES)
    return workdir, done.stdout + done.stderr


#: One fake GPU for each training job, and leave to fall back to the CPU, as a copy of the profile would set them.
GPU_RESOURCES = [
    "--set-resources",
    *(
        f"{rule}:{resource}"
        for rule in ("train_fold", "train_final_baseline", "train_final_selected")
        for resource in ("gpu=1", "gpu_model=fake", "cpu_fallback=1")
    ),
]


FOLDS = [f"results/folds/digits/sym0.4/seed1/K2/m{m}/k{k}.parquet" for m in (1, 2) for k in (1, 2)]


def test_every_compute_job_ran_through_sbatch_and_local_rules_did_not(slurm_run):
    workdir, output = slurm_run
    submitted = {job: Path(log) for job, log in SUBMITTED.findall(output)}
    rules = sorted(log.parent.parent.name.removeprefix("rule_") for log in submitted.values())
    assert rules == [
        "inject_noise",
        "select_samples",
        "train_final_baseline",
        "train_final_selected",
        *["train_fold"] * 4,
    ]
    listed = slurm_jobs()
    for job, log in submitted.items():
        comment, state = listed[job]
        assert state == "COMPLETED" and comment.startswith(f"rule_{log.parent.parent.name.removeprefix('rule_')}")
        assert log.is_file() and str(log).startswith(str(workdir)), "SLURM wrote no job log"
    assert all((workdir / fold).is_file() for fold in FOLDS)
    assert (workdir / "results/report/table2.csv").is_file()
    assert "localrule table2:" in output and "localrule prepare_dataset:" in output


def test_training_jobs_ask_for_the_configured_gpu(slurm_run):
    workdir, output = slurm_run
    for job, log in SUBMITTED.findall(output):
        wants_gpu = "rule_train_" in log
        assert (requested_gpus(job) == "gres:gpu:fake:1") == wants_gpu, (job, log)
    logs = sorted((workdir / "logs").rglob("*.log"))
    assert len(logs) > 4
    for log in logs:
        fell_back = "asked for 1 GPU(s) (its gpu resource) but torch" in log.read_text()
        assert fell_back == (log.relative_to(workdir / "logs").parts[0] in {"folds", "final"}), log


def retrain_folds(run_snakemake, workdir: Path, *options: str) -> str:
    """Retrain the four fold models (nothing else) with extra Snakemake ``options``; the run's output."""
    done = run_profile(
        run_snakemake, workdir, workdir / "config.yaml", *FOLDS, "--forcerun", "train_fold", *GPU_RESOURCES, *options
    )
    return done.stdout + done.stderr


def test_fold_jobs_as_one_array(slurm_run, run_snakemake):
    workdir, _ = slurm_run
    (array,) = SUBMITTED_ARRAY.findall(retrain_folds(run_snakemake, workdir, "--slurm-array-jobs", "train_fold"))
    tasks = {job: state for job, (_, state) in slurm_jobs().items() if job.startswith(f"{array}_")}
    assert tasks == {f"{array}_{task}": "COMPLETED" for task in (1, 2, 3, 4)}


def test_fold_jobs_grouped_into_one_submission(slurm_run, run_snakemake):
    """Four folds in one SLURM job; a per-submission GPU limit runs them in series on the one GPU."""
    workdir, _ = slurm_run
    before = {fold: (workdir / fold).stat().st_mtime_ns for fold in FOLDS}
    grouped = ["--groups", "train_fold=folds", "--group-components", "folds=4"]
    one_gpu = ["--resources", "gpu=1", "--set-resource-scopes", "gpu=local"]
    ((job, log),) = SUBMITTED.findall(retrain_folds(run_snakemake, workdir, *grouped, *one_gpu))
    assert "group_folds" in log and slurm_jobs()[job][1] == "COMPLETED"
    assert requested_gpus(job) == "gres:gpu:fake:1"
    assert all((workdir / fold).stat().st_mtime_ns > before[fold] for fold in FOLDS)
