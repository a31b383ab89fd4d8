"""Bad configs stop Snakemake before it schedules any job, with a message naming the offending key (and, for the
cross-key rules, the fix); nothing is written under results/."""

import copy
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from enkcvs.pipeline.config import run_config_problems

REPO = Path(__file__).resolve().parents[1]
#: The experiments' configs, beside the two entry points config/config.yaml and config/paper.yaml.
EXPERIMENTS = REPO / "config" / "experiments"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
pytestmark = pytest.mark.workflow

BASE = yaml.safe_load((REPO / "tests" / "config" / "tiny.yaml").read_text())
DELETE = object()


def edited(path: str, value) -> str:
    """The tiny config as YAML with the dotted ``path`` set to ``value`` (``DELETE`` removes the key)."""
    config = copy.deepcopy(BASE)
    *parents, last = path.split(".")
    node = config
    for key in parents:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return yaml.safe_dump(config)


DUPLICATE_DATASET = (
    "datasets:\n"
    "  digits: {source: sklearn_digits, noise: [sym0.2], recipe: {model: mlp, optimizer: sgd, lr: 0.1, epochs: 1}}\n"
    "  digits: {source: sklearn_digits, noise: [sym0.4], recipe: {model: mlp, optimizer: sgd, lr: 0.1, epochs: 1}}\n"
    "seeds: [1]\nselection: {K: 2, M: 1, t: 1}\n"
)

# (case, config text, fragments the error must contain: the key's location and what is wrong)
CASES = [
    # unknown keys at every level
    ("unknown top-level key", edited("colour", "blue"), ["'colour' was unexpected"]),
    ("unknown dataset key", edited("datasets.digits.colour", "blue"), ["'colour' was unexpected", "['digits']"]),
    ("unknown recipe key", edited("datasets.digits.recipe.dropout", 0.5), ["'dropout' was unexpected", "['recipe']"]),
    ("unknown selection key", edited("selection.T", 2), ["'T' was unexpected", "['selection']"]),
    ("unknown sensitivity key", edited("sensitivity.Q", 3), ["'Q' was unexpected", "['sensitivity']"]),
    ("unknown report key", edited("report.font", "serif"), ["'font' was unexpected", "['report']"]),
    # wrong types
    ("seeds not a list", edited("seeds", "1"), ["is not of type 'array'", "['seeds']"]),
    ("K not an integer", edited("selection.K", "ten"), ["is not of type 'integer'", "['selection']['K']"]),
    ("lr not a number", edited("datasets.digits.recipe.lr", "fast"), ["not of type 'number'", "['lr']"]),
    (
        "milestones not a list",
        edited("datasets.digits.recipe.milestones", 5),
        ["not of type 'array'", "['milestones']"],
    ),
    ("datasets not a mapping", edited("datasets", ["digits"]), ["is not of type 'object'", "['datasets']"]),
    ("enabled not a boolean", edited("sensitivity.enabled", "yes"), ["not of type 'boolean'", "['enabled']"]),
    ("noise not a list", edited("datasets.digits.noise", "sym0.2"), ["not of type 'array'", "['noise']"]),
    # out of range
    ("K below 2", edited("selection.K", 1), ["minimum of 2", "['selection']['K']"]),
    ("M below 1", edited("selection.M", 0), ["minimum of 1", "['selection']['M']"]),
    ("t below 1", edited("selection.t", 0), ["minimum of 1", "['selection']['t']"]),
    ("gamma above 1", edited("gamma", 1.5), ["maximum of 1", "['gamma']"]),
    ("gamma negative", edited("gamma", -0.1), ["minimum of 0", "['gamma']"]),
    ("mixup alpha zero", edited("datasets.digits.recipe.mixup_alpha", 0), ["minimum of 0", "['mixup_alpha']"]),
    ("noise rate 1.2", edited("datasets.digits.noise", ["sym1.2"]), ["'sym1.2' does not match", "['noise']"]),
    ("epochs zero", edited("datasets.digits.recipe.epochs", 0), ["minimum of 1", "['epochs']"]),
    ("lr zero", edited("datasets.digits.recipe.lr", 0), ["minimum of 0", "['lr']"]),
    ("validation share 0.9", edited("datasets.digits.recipe.validation_fraction", 0.9), ["maximum of 0.5"]),
    ("batch of one", edited("datasets.digits.recipe.batch_size", 1), ["minimum of 2", "['batch_size']"]),
    ("negative seed", edited("seeds", [-1]), ["minimum of 0", "['seeds']"]),
    # empty, duplicated, missing
    ("empty seed list", edited("seeds", []), ["should be non-empty", "['seeds']"]),
    ("seed listed twice", edited("seeds", [1, 1]), ["non-unique elements", "['seeds']"]),
    ("no datasets", edited("datasets", {}), ["should be non-empty", "['datasets']"]),
    ("duplicate dataset name", DUPLICATE_DATASET, ["line 3: duplicate key 'digits' (first on line 2): keep one"]),
    (
        "noise listed twice",
        edited("datasets.digits.noise", ["sym0.4", "sym0.4"]),
        ["datasets.digits.noise lists a setting twice"],
    ),
    ("missing selection.M", edited("selection.M", DELETE), ["'M' is a required property", "['selection']"]),
    ("missing datasets", edited("datasets", DELETE), ["'datasets' is a required property"]),
    ("missing recipe lr", edited("datasets.digits.recipe.lr", DELETE), ["'lr' is a required property"]),
    # values that do not exist or do not fit together
    ("noise that does not parse", edited("datasets.digits.noise", ["gauss0.2"]), ["'gauss0.2' does not match"]),
    (
        "asymmetric noise without a map",
        edited("datasets.digits.asymmetric_map", None),
        ["datasets.digits.noise has 'asym0.3' but datasets.digits.asymmetric_map is not set: set it to one of"],
    ),
    ("unknown asymmetric map", edited("datasets.digits.asymmetric_map", "svhn"), ["'svhn' is not one of"]),
    ("t above M", edited("selection.t", 3), ["selection.t = 3 exceeds selection.M = 2: choose 1 <= t <= M"]),
    (
        "K above the samples",
        edited("selection.K", 2000),
        ["K = 2000 exceeds the 1500 training samples of datasets.digits: lower selection.K"],
    ),
    ("unknown method", edited("methods", ["ce", "magic"]), ["'magic' is not one of", "['methods']"]),
    ("unknown source", edited("datasets.digits.source", "imagenet"), ["'imagenet' is not one of", "['source']"]),
    ("unknown model", edited("datasets.digits.recipe.model", "resnet9000"), ["'resnet9000' is not one of"]),
    (
        "milestone past the epochs",
        edited("datasets.digits.recipe.milestones", [2, 50]),
        ["datasets.digits.recipe.milestones [2, 50] lie past recipe.epochs"],
    ),
    (
        "sensitivity on an unknown dataset",
        edited("sensitivity.dataset", "cifar10"),
        ["sensitivity.dataset 'cifar10' is not under datasets: choose one of ['digits']"],
    ),
    (
        "sensitivity noise not run",
        edited("sensitivity.noise", ["sym0.8"]),
        ["sensitivity.noise 'sym0.8' is not in datasets.digits.noise"],
    ),
    ("M sweep below 2", edited("sensitivity.M", [1]), ["minimum of 2", "['sensitivity']['M']"]),
    ("empty K sweep", edited("sensitivity.K", []), ["sensitivity.K is empty, so the sweep draws nothing"]),
    ("empty noise sweep", edited("sensitivity.noise", []), ["sensitivity.noise is empty, so the sweep draws nothing"]),
    ("empty t sweep", edited("sensitivity.t", []), ["sensitivity.t is empty, so the sweep draws nothing"]),
    ("empty seed list", edited("sensitivity.seeds", []), ["sensitivity.seeds is empty, so the sweep draws nothing"]),
    (
        "t sweep above the main M",
        edited("sensitivity.t", [1, 3]),
        ["sensitivity.t [3] exceed the main M = 2 of digits, at which t is swept: choose 1 <= t <= M"],
    ),
    ("the old single seed key", edited("sensitivity.seed", 1), ["'seed' was unexpected", "['sensitivity']"]),
    # sources, their options and the models that fit them
    (
        "option the source does not take",
        edited("datasets.digits.source_options", {"root": "data"}),
        ["datasets.digits.source_options ['root'] are not options of source 'sklearn_digits': it takes none"],
    ),
    ("unknown source option", edited("datasets.digits.source_options", {"mirror": "x"}), ["'mirror' was unexpected"]),
    (
        "text model on images",
        edited("datasets.digits.recipe.model", "text_classifier"),
        ["datasets.digits.recipe.model 'text_classifier' does not fit image data of source 'sklearn_digits'"],
    ),
    (
        "super-class map without super-classes",
        edited("datasets.digits.asymmetric_map", "cifar100_pairs"),
        ["datasets.digits.asymmetric_map 'cifar100_pairs' needs CIFAR-100's super-classes"],
    ),
    (
        "per-dataset t above M",
        edited("datasets.digits.selection", {"K": 2, "M": 2, "t": 3}),
        ["datasets.digits.selection.t = 3 exceeds datasets.digits.selection.M = 2"],
    ),
    ("unknown augmentation", edited("datasets.digits.recipe.augment", "rotate"), ["'rotate' is not one of"]),
    (
        "real noise without a forget rate",
        edited("datasets.digits.noise", ["real"]),
        [
            "datasets.digits.noise has 'real' (unknown noise rate and true labels), so co-teaching's forget rate cannot "
            "be 'actual': set datasets.digits.baselines.coteaching.forget_rate to a number"
        ],
    ),
    (
        "real noise with the nominal forget rate",
        edited(
            "datasets.digits.baselines", {"sl": {"alpha": 0.1, "beta": 1.0}, "coteaching": {"forget_rate": "nominal"}}
        ).replace("- sym0.4\n    - asym0.3", "- real"),
        ["so co-teaching's forget rate cannot be 'nominal'"],
    ),
    # the baselines, as their authors train them
    (
        "SL on an authors' schedule that does not exist",
        edited(
            "datasets.digits",
            {
                **BASE["datasets"]["digits"],
                "paper_name": None,
                "baselines": {"sl": {"alpha": 0.01, "beta": 1.0, "schedule": "authors"}},
            },
        ),
        [
            "datasets.digits: baseline 'sl' has no authors' schedule for paper dataset None (known: ['MNIST']): set "
            "baselines.sl.schedule: dataset"
        ],
    ),
    (
        "unknown SL schedule",
        edited("datasets.digits.baselines", {"sl": {"alpha": 0.1, "beta": 1.0, "schedule": "own"}}),
        ["'own' is not one of ['dataset', 'authors']"],
    ),
    (
        "time-based decay with Adam",
        edited(
            "datasets.digits.recipe",
            {**BASE["datasets"]["digits"]["recipe"], "optimizer": "adam", "lr_step_decay": 0.01},
        ),
        ["datasets.digits: recipe lr_step_decay 0.01 must be >= 0 and applies to optimizer sgd only, not 'adam'"],
    ),
    (
        "a linear lr decay with SGD",
        edited("datasets.digits.recipe", {**BASE["datasets"]["digits"]["recipe"], "lr_linear_decay_from": 2}),
        [
            "datasets.digits: recipe lr_linear_decay_from 2 must be an epoch in 0..3 and applies to optimizer adam without "
            "milestones (here 'sgd', milestones [2])"
        ],
    ),
    (
        "Co-teaching's authors' Adam with a dataset's Keras decay",
        edited(
            "datasets.digits",
            {
                **BASE["datasets"]["digits"],
                "recipe": {**BASE["datasets"]["digits"]["recipe"], "lr_step_decay": 0.01},
                "baselines": {**BASE["datasets"]["digits"]["baselines"], "coteaching": {"schedule": "authors"}},
            },
        ),
        [
            "datasets.digits.baselines.coteaching on its authors' schedule: recipe lr_step_decay 0.01 must be >= 0 and "
            "applies to optimizer sgd only, not 'adam'"
        ],
    ),
    (
        "beta1 after a decay that is not there",
        edited("datasets.digits.recipe", {**BASE["datasets"]["digits"]["recipe"], "beta1_after_decay": 0.1}),
        ["datasets.digits: recipe beta1_after_decay 0.1 must lie in [0, 1) and comes with lr_linear_decay_from"],
    ),
    (
        "SL without its values",
        edited("datasets.digits.baselines", DELETE),
        [
            "datasets.digits.baselines.sl needs alpha and beta (set ['alpha', 'beta']): symmetric cross-entropy has no "
            "values that fit every dataset"
        ],
    ),
    (
        "SL with one value",
        edited("datasets.digits.baselines", {"sl": {"alpha": 0.1}}),
        ["datasets.digits.baselines.sl needs alpha and beta (set ['beta'])"],
    ),
    (
        "co-teaching with mixup",
        edited("datasets.digits.baselines", {"sl": {"alpha": 0.1, "beta": 1.0}, "coteaching": {"mixup": True}}),
        ["datasets.digits.baselines.coteaching.mixup is true, but co-teaching cannot train with mixup"],
    ),
    (
        "a fraction of an epoch ramped per epoch",
        edited(
            "datasets.digits.baselines",
            {"sl": {"alpha": 0.1, "beta": 1.0}, "coteaching": {"warmup_epochs": 0.5, "ramp": "epoch"}},
        ),
        ["datasets.digits.baselines.coteaching.warmup_epochs 0.5 is no whole number of epochs"],
    ),
    (
        "unknown forget rate",
        edited(
            "datasets.digits.baselines", {"sl": {"alpha": 0.1, "beta": 1.0}, "coteaching": {"forget_rate": "guess"}}
        ),
        ["'guess' is not valid under any of the given schemas"],
    ),
    (
        "baseline mixup not a boolean",
        edited("datasets.digits.baselines", {"ce": {"mixup": "yes"}}),
        ["not of type 'boolean'"],
    ),
    (
        "ceiling on unknown true labels",
        edited("datasets.digits.noise", ["real"]).replace("- coteaching", "- ce_true"),
        ["datasets.digits.noise has 'real' (true labels unknown), so ['ce_true'] cannot train on them"],
    ),
    # execution belongs to profiles: GPUs, job layout, workers and graphs are no config keys
    ("GPUs in the config", edited("gpu", {"per_training_job": 1}), ["'gpu' was unexpected"]),
    ("a job layout in the config", edited("training_jobs", "setting"), ["'training_jobs' was unexpected"]),
    (
        "loader workers in a recipe",
        edited("datasets.digits.recipe.loader_workers", 4),
        ["'loader_workers' was unexpected"],
    ),
    ("CUDA graphs in a recipe", edited("datasets.digits.recipe.cuda_graphs", True), ["'cuda_graphs' was unexpected"]),
    ("stacked folds not a boolean", edited("stacked_folds", "auto"), ["'auto' is not of type 'boolean'"]),
]


@pytest.mark.parametrize(("case", "text", "fragments"), CASES, ids=[case for case, _, _ in CASES])
def test_a_bad_config_is_named_by_the_workflows_check(tmp_path, case, text, fragments):
    """Each case through the check the workflow runs as it loads (one Snakemake start per case would cost seconds;
    the test below runs a few of them through Snakemake itself)."""
    config = tmp_path / "config.yaml"
    config.write_text(text)
    problems = run_config_problems(
        yaml.safe_load(text), config_files=[str(config)], validate=lambda config: validate(config, schema=str(SCHEMA))
    )
    assert problems
    for fragment in fragments:
        assert fragment in "\n".join(problems), problems


#: A bad config of each kind the check finds: keys given twice, the schema, a rule across keys.
THROUGH_SNAKEMAKE = ["duplicate dataset name", "unknown dataset key", "t sweep above the main M"]


@pytest.mark.parametrize("case", THROUGH_SNAKEMAKE)
def test_a_bad_config_stops_snakemake_before_any_job(tmp_path, case):
    _, text, fragments = next(entry for entry in CASES if entry[0] == case)
    config = tmp_path / "config.yaml"
    config.write_text(text)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(REPO / "workflow" / "Snakefile"),
            "-d",
            str(tmp_path),
            "--configfile",
            str(config),
            "--cores",
            "1",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    for fragment in ["invalid config:", *fragments]:
        assert fragment in done.stderr, done.stderr[-2000:]
    assert not (tmp_path / "results").exists() and not (tmp_path / "logs").exists()


def test_the_shipped_configs_are_valid(tmp_path):
    # config/paper.yaml: tests/test_paper_workflow.py
    shipped = (
        *sorted(path for path in (REPO / "config").glob("*.yaml") if path.name != "paper.yaml"),
        *sorted(EXPERIMENTS.rglob("*.yaml")),
        *sorted((REPO / "tests" / "config").glob("*.yaml")),
        *sorted((REPO / "benchmarks").glob("*.yaml")),
    )

    def dry_run(index_config):  # each in a working directory of its own: Snakemake locks one per run
        index, config = index_config
        return config, subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                "-s",
                str(REPO / "workflow" / "Snakefile"),
                "-d",
                str(tmp_path / str(index)),
                "--configfile",
                str(config),
                "-n",
                "--quiet",
                "rules",
            ],
            capture_output=True,
            text=True,
        )

    with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:  # independent processes: one per core at a time
        for config, done in pool.map(dry_run, enumerate(shipped)):
            assert done.returncode == 0, (config, done.stderr[-2000:])


def test_no_shipped_config_makes_an_execution_choice():
    """How jobs run (stacked folds, GPUs, workers, graphs) is a profile's or the command line's: a shipped config
    holds the science alone, and no shipped profile stacks folds either, so every shipped route keeps a target per
    fold (stacking is asked for with --config stacked_folds=True)."""
    shipped = [REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml", *sorted(EXPERIMENTS.rglob("*.yaml"))]
    assert [path.name for path in shipped if "stacked_folds" in yaml.safe_load(path.read_text())] == []
    profiles = sorted((REPO / "profiles").glob("*/config.yaml"))
    assert len(profiles) >= 4
    stacking = [path.parent.name for path in profiles if "stacked_folds" in str(yaml.safe_load(path.read_text()))]
    assert stacking == []


def test_the_coteaching_actual_record_changes_only_the_forget_rate():
    """Recorded in mnist-full's folder, it must rerun only the Co-teaching models: one key apart."""
    full = yaml.safe_load((EXPERIMENTS / "mnist-full.yaml").read_text())
    actual = yaml.safe_load((EXPERIMENTS / "mnist-full-coteaching-actual.yaml").read_text())
    assert actual["datasets"]["mnist"]["baselines"]["coteaching"]["forget_rate"] == "actual"
    actual["datasets"]["mnist"]["baselines"]["coteaching"]["forget_rate"] = "nominal"
    assert actual == full


@pytest.mark.parametrize("parent", ["mnist-sample-paper", "trec-full"])
def test_a_coteaching_actual_run_is_its_parent_at_the_asymmetric_settings_with_coteaching_alone(parent):
    """Its Co-teaching cells sit beside the parent record's: same data, labels, seed and recipe, another forget rate."""
    full = yaml.safe_load((EXPERIMENTS / f"{parent}.yaml").read_text())
    actual = yaml.safe_load((EXPERIMENTS / f"{parent}-coteaching-actual.yaml").read_text())
    ((name, dataset),) = actual["datasets"].items()
    assert dataset["baselines"]["coteaching"]["forget_rate"] == "actual"
    assert dataset["noise"] == [n for n in full["datasets"][name]["noise"] if n.startswith("asym")]
    assert (actual["methods"], actual["ablation"]) == (["coteaching"], False)
    dataset["baselines"]["coteaching"]["forget_rate"] = "nominal"
    dataset["noise"] = full["datasets"][name]["noise"]
    actual["methods"], actual["ablation"] = full["methods"], full["ablation"]
    assert actual == full


def test_a_full_mnist_setting_record_is_mnist_full_at_another_noise_setting():
    """Its cells join mnist-full's in one Table 2 row: same data, recipe, selection and seed."""
    full = yaml.safe_load((EXPERIMENTS / "mnist-full.yaml").read_text())
    setting = yaml.safe_load((EXPERIMENTS / "mnist-full-sym0.8.yaml").read_text())
    dataset = setting["datasets"]["mnist"]
    assert dataset.pop("noise") == ["sym0.8"] and full["datasets"]["mnist"].pop("noise") == ["asym0.4"]
    assert dataset["baselines"]["coteaching"].pop("forget_rate") == "actual"
    full["datasets"]["mnist"]["baselines"]["coteaching"].pop("forget_rate")
    assert setting.pop("ablation") is False and full.pop("ablation") is True
    assert setting == full


def test_the_sl_authors_record_is_mnist_full_with_sl_alone_on_its_authors_schedule():
    """Its SL cells sit beside mnist-full's and mnist-full-sym0.8's: same data, labels, seed, model and loss."""
    full = yaml.safe_load((EXPERIMENTS / "mnist-full.yaml").read_text())
    authors = yaml.safe_load((EXPERIMENTS / "mnist-full-sl-authors.yaml").read_text())
    dataset = authors["datasets"]["mnist"]
    assert dataset.pop("noise") == ["asym0.4", "sym0.8"] and full["datasets"]["mnist"].pop("noise") == ["asym0.4"]
    assert dataset["baselines"]["sl"].pop("schedule") == "authors"
    assert full["datasets"]["mnist"]["baselines"]["sl"].pop("schedule") == "dataset"  # as mnist-full recorded it
    assert (authors.pop("methods"), authors.pop("ablation")) == (["sl"], False)
    full.pop("methods"), full.pop("ablation")
    assert authors == full


def test_the_coteaching_authors_record_is_mnist_full_with_coteaching_alone_as_its_authors_train_it():
    """Its Co-teaching cells sit beside those of mnist-full-coteaching-actual and mnist-full-sym0.8: same data,
    labels, seed and forget rate, the authors' network, schedule and forget-rate rise."""
    full = yaml.safe_load((EXPERIMENTS / "mnist-full.yaml").read_text())
    authors = yaml.safe_load((EXPERIMENTS / "mnist-full-coteaching-authors.yaml").read_text())
    dataset = authors["datasets"]["mnist"]
    assert dataset.pop("noise") == ["asym0.4", "sym0.8"] and full["datasets"]["mnist"].pop("noise") == ["asym0.4"]
    assert dataset["baselines"].pop("coteaching") == {
        "forget_rate": "actual",
        "warmup_epochs": 9,
        "ramp": "epoch",
        "schedule": "authors",
    }
    full["datasets"]["mnist"]["baselines"].pop("coteaching")
    assert (authors.pop("methods"), authors.pop("ablation")) == (["coteaching"], False)
    full.pop("methods"), full.pop("ablation")
    assert authors == full


@pytest.mark.parametrize(
    "name, noise, seeds",
    [
        ("mnist-full-asym0.2", ["asym0.2"], [1]),
        ("mnist-full-seeds", ["asym0.4"], [2, 3]),
        ("mnist-full-seeds-sym0.8", ["sym0.8"], [2, 3]),
        ("mnist-full-sym", ["sym0.0", "sym0.2", "sym0.4", "sym0.6"], [1]),
    ],
)
def test_the_full_mnist_row_records_are_mnist_full_with_every_method_on_its_default(name, noise, seeds):
    """Their cells join mnist-full's in one Table 2 row: same data, recipe and selection; SL and Co-teaching train
    as the default has them (the records beside mnist-full give seed 1's such cells at asymmetric 0.4)."""
    full = yaml.safe_load((EXPERIMENTS / "mnist-full.yaml").read_text())
    setting = yaml.safe_load((EXPERIMENTS / f"{name}.yaml").read_text())
    assert setting["datasets"]["mnist"].pop("noise") == noise and setting.pop("seeds") == seeds
    assert setting["datasets"]["mnist"].pop("baselines") == {
        "sl": {"alpha": 0.01, "beta": 1.0, "schedule": "authors"},
        "coteaching": {"forget_rate": "actual", "warmup_epochs": 10},
    }
    assert setting.pop("ablation") is False
    for key in ("noise", "baselines"):
        full["datasets"]["mnist"].pop(key)
    full.pop("seeds"), full.pop("ablation")
    assert setting == full


@pytest.mark.parametrize(
    ("curve", "parent", "method"),
    [
        ("mnist-full-sym0.8-ce-curve", "mnist-full-sym0.8", "ce"),
        ("mnist-full-coteaching-curve", "mnist-full-coteaching-actual", "coteaching"),
    ],
)
def test_a_curve_record_retrains_one_method_of_its_parent_asking_for_its_curve(curve, parent, method):
    """Its curve is of the parent record's model: the same data, labels, seed, recipe and options."""
    child = yaml.safe_load((EXPERIMENTS / f"{curve}.yaml").read_text())
    full = yaml.safe_load((EXPERIMENTS / f"{parent}.yaml").read_text())
    ((name, dataset),) = child["datasets"].items()
    parent_dataset = full["datasets"][name]
    assert dataset.pop("baselines") == {method: {**parent_dataset.pop("baselines").get(method, {}), "test_curve": True}}
    assert dataset == parent_dataset
    assert (child["methods"], child["seeds"], child["ablation"]) == ([method], full["seeds"], False)


CELLS = sorted((EXPERIMENTS / "cells").glob("*.yaml"))


def test_the_k10_cells_are_the_papers_full_mnist_settings_in_the_order_the_readmes_row_needs_them():
    assert [path.stem for path in CELLS] == [
        "01-asym0.4",
        "02-sym0.8",
        "03-asym0.2",
        "04-sym0.0",
        "05-sym0.2",
        "06-sym0.4",
        "07-sym0.6",
    ]


@pytest.mark.parametrize("cell", CELLS, ids=[path.stem for path in CELLS])
def test_each_k10_cell_is_mnist_full_k10_at_one_setting_with_three_seeds_the_papers_four_methods_in_fp32(cell):
    """Its cells join the full-MNIST row: mnist-full-k10's data, recipe and selection at one noise setting, with
    seeds 1 to 3, the paper's four methods (SL on its authors' schedule, Co-teaching at the actual noise rate) and
    fp32 (bf16 false), and its header names the command that records it."""
    k10 = yaml.safe_load((EXPERIMENTS / "mnist-full-k10.yaml").read_text())
    setting = yaml.safe_load(cell.read_text())
    _, noise = cell.stem.split("-")
    mnist = setting["datasets"]["mnist"]
    assert mnist.pop("noise") == [noise] and setting.pop("seeds") == [1, 2, 3]
    assert setting.pop("methods") == ["ce", "coteaching", "sl", "enkcvs"]
    assert mnist["recipe"].pop("bf16") is False
    assert mnist.pop("baselines") == {
        "sl": {"alpha": 0.01, "beta": 1.0, "schedule": "authors"},
        "coteaching": {"forget_rate": "actual", "warmup_epochs": 10},
    }
    k10["datasets"]["mnist"].pop("noise"), k10.pop("seeds"), k10.pop("methods")
    assert "bf16" not in k10["datasets"]["mnist"]["recipe"]
    assert setting == k10
    assert "make record-cells PROFILE=profiles/gpu-node" in cell.read_text()
