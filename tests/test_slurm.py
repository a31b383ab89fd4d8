"""The SLURM profiles. Dry runs of the tiny config through the command line show what each job of profiles/slurm and
profiles/slurm-gpu asks for (threads, memory, runtime, GPUs), whatever a --set-resources or --set-threads adds.

Against a real scheduler, a single-node SLURM cluster (tests/slurm/cluster.sh) runs the smallest complete config to the
end under profiles/slurm-gpu, its sbatch lines and allocations checked, and its fold jobs submitted one by one, as an
array and as one group job.

Installing Debian's SLURM and munge packages and starting their daemons changes the machine, so the cluster tests run
only where ``ENKCVS_TEST_SLURM=1`` asks for it (``.ci/run`` sets it); otherwise they are skipped with that reason. They
need root (or the packages installed) to start the cluster, and are skipped with the reason where SLURM cannot be
installed. Every Snakemake call is bounded by ``timeout`` (a status query that never answers must not hang CI).
"""

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CLUSTER = REPO / "tests" / "slurm" / "cluster.sh"
PROFILE = REPO / "profiles" / "slurm"
GPU_PROFILE = REPO / "profiles" / "slurm-gpu"
pytestmark = pytest.mark.workflow

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
#: The plugin's sbatch line of a job (--verbose), up to the command it wraps.
SBATCH_CALL = re.compile(r"sbatch call: (sbatch .*?) --wrap=")

TRAINING = ("train_fold", "train_stack", "train_final_baseline", "train_final_selected", "train_final_pruned")
#: (mem_mb, runtime in minutes) each rule's job asks for on both profiles: the training rules' own, and
#: compare_confident_learning's memory; everything else the profiles' default-resources.
ASKED = {
    "train_fold": (8000, 240),
    "train_stack": (32000, 720),
    "train_final_baseline": (8000, 480),
    "train_final_selected": (8000, 480),
    "train_final_pruned": (8000, 480),
    "compare_confident_learning": (4000, 30),
}
DEFAULT_ASKED = (2000, 30)


def planned_requests(run_snakemake, workdir: Path, *args: str) -> dict[str, set[tuple[int, int, int, str | None]]]:
    """Rule -> what its jobs ask for, (threads, mem_mb, runtime, gpu), as a dry run prints each job. A dry run scales
    threads down to --cores (1 unless given), a cluster run without --cores does not: hence 64 cores."""
    done = run_snakemake(workdir, "--dry-run", "--cores", "64", *args)
    assert done.returncode == 0, done.stderr[-3000:]
    requests: dict[str, set] = {}
    jobs = re.findall(r"^(?:local)?rule (\w+):\n((?:[ \t]+.*\n?)*)", done.stdout + done.stderr, flags=re.MULTILINE)
    assert jobs, done.stdout[-3000:]
    for rule, body in jobs:
        threads = re.search(r"^\s+threads: (\d+)$", body, flags=re.MULTILINE)
        listed = re.search(r"^\s+resources: (.*)$", body, flags=re.MULTILINE)[1]
        resources = dict(item.split("=", 1) for item in listed.split(", "))
        assert "cpus_per_task" not in resources, f"{rule}: cpus_per_task would replace its threads in sbatch"
        asked = (int(threads[1]) if threads else 1, int(resources["mem_mb"]), int(resources["runtime"]))
        requests.setdefault(rule, set()).add((*asked, resources.get("gpu")))
    return requests


@pytest.mark.parametrize(
    ("profile", "options", "threads", "gpus", "runtimes"),
    [
        (
            PROFILE,
            [
                "--set-resources",
                "train_fold:gpu=1",
                "train_final_baseline:runtime=600",
                "--set-threads",
                "train_fold=2",
            ],
            {"train_fold": 2},
            {"train_fold"},
            {"train_final_baseline": 600},
        ),
        (GPU_PROFILE, [], dict.fromkeys(TRAINING, 5) | {"train_stack": 1}, set(TRAINING), {}),
        (
            GPU_PROFILE,
            ["--config", "stacked_folds=True"],
            dict.fromkeys(TRAINING, 5) | {"train_stack": 1},
            set(TRAINING),
            {},
        ),
        # The command line's --set-resources and --set-threads replace the profile's blocks whole, as it says
        (
            GPU_PROFILE,
            ["--set-resources", "train_fold:gpu=1", "--set-threads", "train_fold=2"],
            {"train_fold": 2},
            {"train_fold"},
            {},
        ),
    ],
    ids=[
        "slurm, the command line adds",
        "slurm-gpu",
        "slurm-gpu, stacked folds",
        "slurm-gpu, the command line replaces",
    ],
)
def test_each_job_asks_for_its_rules_threads_memory_and_runtime(
    tmp_path, run_snakemake, profile, options, threads, gpus, runtimes
):
    """A --set-resources on the command line adds to the rules' own memory and runtime instead of resetting them to
    the defaults, and no cpus_per_task hides a rule's threads, which the SLURM plugin passes as --cpus-per-task."""
    requests = planned_requests(run_snakemake, tmp_path, "--profile", str(profile), *options)
    assert {rule for rule in requests if rule.startswith("train_")} <= set(TRAINING), (
        "a training rule missing here and maybe in profiles/slurm-gpu"
    )
    stacked = "stacked_folds=True" in options
    assert ("train_stack" in requests) == stacked and ("train_fold" in requests) != stacked
    assert {"train_final_baseline", "train_final_selected", "compare_confident_learning", "select_samples"} <= set(
        requests
    )
    for rule, asked in requests.items():
        mem_mb, runtime = ASKED.get(rule, DEFAULT_ASKED)
        expected = (threads.get(rule, 1), mem_mb, runtimes.get(rule, runtime), "1" if rule in gpus else None)
        assert asked == {expected}, rule


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


def run_profile(run_snakemake, workdir: Path, config: Path, profile: Path, *args: str) -> subprocess.CompletedProcess:
    """``snakemake --profile PROFILE`` on the test cluster, killed after 10 minutes (a status query that never answers
    must not hang CI)."""
    done = run_snakemake(workdir, *args, "--profile", str(profile), *TEST_CLUSTER_ARGS, config=config, timeout=600)
    assert done.returncode == 0, done.stderr[-6000:]
    return done


def slurm_jobs() -> dict[str, tuple[str, str]]:
    """Every job the cluster still lists: id -> (comment, state); array tasks as '<job>_<task>'."""
    listed = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i|%k|%T"], capture_output=True, text=True, check=True)
    return {job: (comment, state) for job, comment, state in (line.split("|") for line in listed.stdout.splitlines())}


def job_fields(job_id: str) -> dict[str, str]:
    """What ``scontrol show job`` says of a job: NumCPUs, TresPerJob (e.g. 'gres:gpu:1', absent without GPUs) ..."""
    shown = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True, check=True).stdout
    return dict(re.findall(r"([\w/:]+)=(\S*)", shown))


def requested_gpus(job_id: str) -> str:
    """The job's per-job trackable resources, e.g. 'gres:gpu:1' ('' when it asked for none)."""
    return job_fields(job_id).get("TresPerJob", "")


@pytest.fixture(scope="module")
def gpu_profile(tmp_path_factory) -> Path:
    """profiles/slurm-gpu as a copy of it on this cluster would have it: torch sees no fake GPU, so its training jobs
    are allowed to fall back to the CPU, and say so in their logs."""
    profile = yaml.safe_load((GPU_PROFILE / "config.yaml").read_text())
    for resources in profile["set-resources"].values():
        resources["cpu_fallback"] = 1
    folder = tmp_path_factory.mktemp("slurm-gpu")
    (folder / "config.yaml").write_text(yaml.safe_dump(profile))
    return folder


#: train_fold's CPUs on the two-CPU test node. This --set-threads replaces the profile's, so the final models' jobs
#: keep their rules' one thread.
FOLD_THREADS = 2


@pytest.fixture(scope="module")
def slurm_run(slurm_cluster, tmp_path_factory, run_snakemake, gpu_profile):
    """The resume test's config (K = 2, M = 2: four fold jobs, 3 epochs each) under profiles/slurm-gpu, one fake GPU
    per training job, run to the end; verbose, so that the output shows each job's sbatch line."""
    workdir = tmp_path_factory.mktemp("slurm-run")
    config = yaml.safe_load((REPO / "tests" / "config" / "resume.yaml").read_text())
    config["datasets"]["digits"]["recipe"]["epochs"] = 3
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    threads = ["--set-threads", f"train_fold={FOLD_THREADS}"]
    done = run_profile(run_snakemake, workdir, workdir / "config.yaml", gpu_profile, *threads, "--verbose")
    return workdir, done.stdout + done.stderr


FOLDS = [f"results/folds/digits/sym0.4/seed1/K2/m{m}/k{k}.parquet" for m in (1, 2) for k in (1, 2)]


@pytest.mark.slurm
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


@pytest.mark.slurm
def test_each_sbatch_line_asks_for_its_rules_threads_memory_runtime_and_gpu(slurm_run):
    """A rule's threads are its job's CPUs (--cpus-per-task, and SLURM allocates them); under profiles/slurm-gpu a
    training job asks for one GPU."""
    _, output = slurm_run
    calls = [shlex.split(call) for call in SBATCH_CALL.findall(output)]
    submitted = SUBMITTED.findall(output)
    assert submitted and len(calls) == len(submitted)
    for job, log in submitted:
        rule = Path(log).parent.parent.name.removeprefix("rule_")
        (call,) = [call for call in calls if str(Path(log).parent / "%j.log") in call]
        threads = FOLD_THREADS if rule == "train_fold" else 1
        mem_mb, runtime = ASKED.get(rule, DEFAULT_ASKED)
        gpus = ["--gpus=1"] if rule.startswith("train_") else []
        asked = ["-t", str(runtime), "--mem", str(mem_mb), f"--cpus-per-task={threads}", *gpus]
        assert [word for word in call if word in [*asked, "--gpus=1"]] == asked, call
        shown = job_fields(job)
        assert (shown["NumCPUs"], shown["CPUs/Task"]) == (str(threads), str(threads)), (rule, shown)
        assert shown.get("TresPerJob", "") == ("gres:gpu:1" if gpus else ""), (rule, shown)


@pytest.mark.slurm
def test_training_jobs_fall_back_to_the_cpu_where_torch_sees_no_gpu(slurm_run):
    workdir, _ = slurm_run
    logs = sorted((workdir / "logs").rglob("*.log"))
    assert len(logs) > 4
    for log in logs:
        fell_back = "asked for 1 GPU(s) (its gpu resource) but torch" in log.read_text()
        assert fell_back == (log.relative_to(workdir / "logs").parts[0] in {"folds", "final"}), log


def retrain_folds(run_snakemake, workdir: Path, profile: Path, *options: str) -> str:
    """Retrain the four fold models (nothing else) with extra Snakemake ``options``; the run's output."""
    done = run_profile(
        run_snakemake, workdir, workdir / "config.yaml", profile, *FOLDS, "--forcerun", "train_fold", *options
    )
    return done.stdout + done.stderr


@pytest.mark.slurm
def test_fold_jobs_as_one_array(slurm_run, run_snakemake, gpu_profile):
    workdir, _ = slurm_run
    threads = ["--set-threads", f"train_fold={FOLD_THREADS}"]
    output = retrain_folds(run_snakemake, workdir, gpu_profile, "--slurm-array-jobs", "train_fold", *threads)
    (array,) = SUBMITTED_ARRAY.findall(output)
    tasks = {job: state for job, (_, state) in slurm_jobs().items() if job.startswith(f"{array}_")}
    assert tasks == {f"{array}_{task}": "COMPLETED" for task in (1, 2, 3, 4)}


@pytest.mark.slurm
def test_fold_jobs_grouped_into_one_submission(slurm_run, run_snakemake, gpu_profile):
    """Four folds in one SLURM job; a per-submission GPU limit runs them in series on the one GPU."""
    workdir, _ = slurm_run
    before = {fold: (workdir / fold).stat().st_mtime_ns for fold in FOLDS}
    grouped = ["--groups", "train_fold=folds", "--group-components", "folds=4"]
    one_gpu = ["--resources", "gpu=1", "--set-resource-scopes", "gpu=local"]
    threads = ["--set-threads", f"train_fold={FOLD_THREADS}"]
    ((job, log),) = SUBMITTED.findall(retrain_folds(run_snakemake, workdir, gpu_profile, *grouped, *one_gpu, *threads))
    assert "group_folds" in log and slurm_jobs()[job][1] == "COMPLETED"
    assert requested_gpus(job) == "gres:gpu:1"
    assert all((workdir / fold).stat().st_mtime_ns > before[fold] for fold in FOLDS)
