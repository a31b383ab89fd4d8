# The config's check and the input functions of every rule. What a run trains and reports is planned in one place,
# enkcvs.pipeline.plan (PLAN); the functions here only fill the rules' output patterns with its answers. Planning
# needs Snakemake and the standard library alone: the modules imported here use nothing else.

import functools
import io
import os
import sys
import tarfile
import tempfile
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.sourcecache import HostingProviderFile
from snakemake.utils import validate


def package_source():
    """The folder of the enkcvs package this workflow came with (src/ beside workflow/). Planning imports it from
    there, and so does every job (PYTHONPATH): no env holds a copy of the code, so every job runs the code of the
    workflow that planned it."""
    basedir = workflow.current_basedir
    if isinstance(basedir, HostingProviderFile):
        return hosted_source(basedir)
    if "://" in str(basedir):
        raise WorkflowError(
            f"this workflow runs from a clone of its repository or from github(...) or gitlab(...), not from "
            f"{basedir}: clone it (git clone URL enkcvs && git -C enkcvs checkout COMMIT) and name "
            "enkcvs/workflow/Snakefile as the module's snakefile"
        )
    return Path(str(basedir)).resolve().parent.parent / "src"


def hosted_source(basedir):
    """The package source of a module named by ``github(...)`` or ``gitlab(...)``, at its commit: Snakemake fetches
    such a module's files one by one, so the folders its jobs import (src/, and workflow/scripts/ for the code
    fingerprints) are taken from the clone Snakemake keeps in its source cache, once per commit, into
    .snakemake/enkcvs-source/<commit>/ of the working directory."""
    repo = basedir.hosted_repo.repo
    commit = repo.commit(basedir.ref).hexsha
    folder = Path(".snakemake", "enkcvs-source", commit).resolve()
    if not folder.exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        archive = repo.git.archive(commit, "src", "workflow/scripts", stdout_as_string=False)
        staging = tempfile.mkdtemp(dir=folder.parent, prefix=f"{commit}.")
        with tarfile.open(fileobj=io.BytesIO(archive)) as files:
            files.extractall(staging, filter="data")
        try:
            os.rename(staging, folder)  # whole or not at all; another planner may have put the same files there
        except OSError:
            if not folder.exists():
                raise
    os.environ.update(ENKCVS_GIT_COMMIT=commit)  # the copy has no .git: what its jobs record as their code's commit
    return folder / "src"


PACKAGE_SOURCE = package_source()
sys.path.insert(0, str(PACKAGE_SOURCE))
if str(PACKAGE_SOURCE) not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ.update(PYTHONPATH=os.pathsep.join(filter(None, [str(PACKAGE_SOURCE), os.environ.get("PYTHONPATH")])))

from enkcvs.data.checkpoints import checkpoint_slug
from enkcvs.data.sources import SOURCES
from enkcvs.method.ensemble import budget_members
from enkcvs.method.methods import ABLATION_LADDER, BASELINE_METHODS, GAMMA_METHODS, SELECTION_METHODS
from enkcvs.pipeline.config import run_config_problems
from enkcvs.pipeline.fingerprint import code_fingerprint
from enkcvs.pipeline.plan import Plan
from enkcvs.training.recipe import baseline_recipe, recipe_params

_problems = run_config_problems(
    config,
    config_files=workflow.configfiles,
    # called here, so that Snakemake reads the schema beside this file, wherever the workflow was deployed from
    validate=lambda config: validate(config, schema="../schemas/config.schema.yaml"),
)
if _problems:
    raise WorkflowError("invalid config:\n  " + "\n  ".join(_problems))


wildcard_constraints:
    dataset=r"[A-Za-z][A-Za-z0-9_]*",
    noise=r"(sym|asym)0(\.[0-9]+)?|real",
    seed=r"[0-9]+",
    K=r"[1-9][0-9]*",
    M=r"[1-9][0-9]*",
    t=r"[1-9][0-9]*",
    m=r"[1-9][0-9]*",
    k=r"[1-9][0-9]*",
    method="|".join(SELECTION_METHODS),
    baseline="|".join(BASELINE_METHODS),
    tokenizer=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    name=r"[A-Za-z][A-Za-z0-9_]*",
    group=r"[a-z]+",


PLAN = Plan(config)
DATASETS = PLAN.datasets


@functools.cache  # train_final's three rules ask for the same fingerprint
def code_of(script):
    """The fingerprint of the package code that ``workflow/scripts/<script>.py`` runs, as a rule's ``code`` param: an
    edit of that code reruns the rule's jobs, an edit elsewhere or of a comment or docstring does not
    (:mod:`enkcvs.pipeline.fingerprint`)."""
    return code_fingerprint(
        script=PACKAGE_SOURCE.parent / "workflow" / "scripts" / f"{script}.py", source=PACKAGE_SOURCE
    )


def canonical(value):
    """``value`` with mapping keys sorted at every level: Snakemake compares params by their text, so reordering keys
    in a config file (or spelling out a default) must not rerun jobs."""
    if isinstance(value, dict):
        return {key: canonical(value[key]) for key in sorted(value)}
    return value


def get_dataset_setting(key):
    """Params-function factory: one key of the wildcard dataset's config entry (keeps params sliced per dataset)."""
    return lambda wildcards: canonical(config["datasets"][wildcards.dataset][key])


def get_layout_check(wildcards):
    """A user-supplied dataset's layout check (it must pass before the data rule reads anything); none otherwise."""
    if SOURCES[config["datasets"][wildcards.dataset]["source"]].check_layout is None:
        return []
    return rules.check_layout.output.record.format(dataset=wildcards.dataset)


def get_source_options(wildcards):
    """The options a dataset's source takes. A relative root or path stays relative to the working directory, where
    every job runs, so that a working directory moved elsewhere reruns nothing."""
    options = dict(config["datasets"][wildcards.dataset]["source_options"])
    for key in ("root", "path"):
        if key in options:
            options[key] = str(Path(options[key]).expanduser())
    return canonical(options)


def get_model_name(wildcards):
    """A text dataset's transformers checkpoint (Hub name, local folder or packaged name)."""
    return config["datasets"][wildcards.dataset]["recipe"]["model_options"].get("checkpoint", "all-MiniLM-L6-v2")


def get_text_inputs(wildcards):
    """``{"tokens": path}`` for a text dataset (its tokenised file), ``{}`` otherwise; used with ``unpack``."""
    dataset = config["datasets"][wildcards.dataset]
    if SOURCES[dataset["source"]].modality != "text":
        return {}
    slug = checkpoint_slug(get_model_name(wildcards))
    return {"tokens": rules.tokenize.output.tokens.format(dataset=wildcards.dataset, tokenizer=slug)}


#: Baseline settings that are not training options: the schedule goes into the recipe (:func:`get_baseline_recipe`);
#: ``test_curve`` only asks the report to draw a curve every final model records, so it reruns no training.
NOT_TRAINING_OPTIONS = ("schedule", "test_curve")


def get_baseline_options(wildcards):
    """Hyperparameters of one baseline on one dataset, whether it mixes included, as configured (co-teaching's
    ``nominal`` or ``actual`` forget rate is resolved by the job: :func:`enkcvs.training.final.resolve_forget_rate`)."""
    options = config["datasets"][wildcards.dataset]["baselines"].get(wildcards.baseline, {})
    return canonical({key: value for key, value in options.items() if key not in NOT_TRAINING_OPTIONS})


def get_recipe(wildcards):
    """The wildcard dataset's training recipe, as a training job's params: a recipe field added later appears only
    where it is set (:func:`enkcvs.training.recipe.recipe_params`), so that adding it retrains nothing."""
    return canonical(recipe_params(config["datasets"][wildcards.dataset]["recipe"]))


def get_canonical(wildcards):
    """Whether a fold job orders the samples by their content and fits on one thread: for a user's own files (the
    sources of :mod:`enkcvs.data.sources.own`), whose label issues must be the same in any row order and on any
    threads (docs/your-data.md); the paper's datasets train as their recorded runs did."""
    return SOURCES[config["datasets"][wildcards.dataset]["source"]].load.module == "own"


def get_baseline_recipe(wildcards):
    """The recipe of one baseline on one dataset: its authors' schedule for the paper's dataset where they give one,
    the dataset's recipe otherwise or where ``baselines.<method>.schedule`` says ``dataset``
    (:func:`enkcvs.training.recipe.baseline_recipe`)."""
    dataset = config["datasets"][wildcards.dataset]
    schedule = dataset["baselines"].get(wildcards.baseline, {}).get("schedule")
    return canonical(
        recipe_params(
            baseline_recipe(
                dataset["recipe"], baseline=wildcards.baseline, schedule=schedule, paper_name=dataset["paper_name"]
            )
        )
    )


def get_gamma(wildcards):
    """gamma of a final model trained on a selection: the config's for the methods whose loss has it, else None."""
    return config["gamma"] if wildcards.method in GAMMA_METHODS else None


def get_incv_iterations(wildcards):
    """INCV's iterations N on the wildcard dataset (``baselines.incv.iterations``)."""
    return config["datasets"][wildcards.dataset]["baselines"]["incv"]["iterations"]


def get_ensemble_members(wildcards):
    """The members of CE + mixup's ensemble at E-NKCVS's budget for the wildcards' (K, M)
    (:func:`enkcvs.method.ensemble.budget_members`)."""
    setting = {"dataset": wildcards.dataset, "noise": wildcards.noise, "seed": wildcards.seed}
    count = budget_members(num_folds=int(wildcards.K), iterations=int(wildcards.M))
    return [rules.train_ensemble_member.output.probabilities.format(**setting, member=j) for j in range(1, count + 1)]


def get_pruning_selection(wildcards):
    """Confident learning's kept set, which prune-and-retrain trains from (its rule is defined after the final
    models' rules, so it is named when a job asks)."""
    return rules.confident_learning_selection.output.selection.format(**dict(wildcards.items()))


def get_fold_predictions(wildcards):
    """The M x K held-out prediction tables that one selection (K, M, t) votes over (str.format, not expand(): it
    is called for every selection and every fold benchmark of the report, and is 7x faster)."""
    setting = {"dataset": wildcards.dataset, "noise": wildcards.noise, "seed": wildcards.seed, "K": wildcards.K}
    pattern, folds = rules.train_fold.output.predictions, range(1, int(wildcards.K) + 1)
    return [pattern.format(**setting, m=m, k=k) for m in range(1, int(wildcards.M) + 1) for k in folds]


def get_stack_iterations(wildcards):
    """M of a stack: the most iterations any selection of its (dataset, noise, seed, K) votes over."""
    return PLAN.stack_iterations(wildcards.dataset, wildcards.noise, int(wildcards.seed), int(wildcards.K))


def selection_outputs(output, settings, points, **fields):
    """Paths of a per-selection output for every (dataset, noise, seed) x (K, M, t) of ``points(dataset)``;
    ``fields`` fill the rest."""
    return [
        output.format(dataset=dataset, noise=noise, seed=seed, K=K, M=M, t=t, **fields)
        for dataset, noise, seed in settings
        for K, M, t in points(dataset)
    ]


def final_rule(model):
    """Which rule trains a final ``model`` (an enkcvs.pipeline.plan.FinalModel). A baseline's, INCV's, one on an
    E-NKCVS selection, prune-and-retrain's (whose kept set has no t), or the ensemble's at E-NKCVS's budget (no t)."""
    special = {
        "incv": rules.train_final_incv,
        "cl_prune": rules.train_final_pruned,
        "ce_mixup_ensemble": rules.average_ensemble,
    }
    if model.method in special:
        return special[model.method]
    return rules.train_final_baseline if model.point is None else rules.train_final_selected


def final_fields(setting, model):
    """The wildcards of a final ``model`` of ``setting`` (the ones its rule's paths do not have are left unused)."""
    dataset, noise, seed = setting
    point = dict(zip("KMt", model.point or ()))
    return {"dataset": dataset, "noise": noise, "seed": seed, "baseline": model.method, "method": model.method, **point}


def final_path(setting, model):
    """The result file of a final ``model`` of ``setting``."""
    return final_rule(model).output.result.format(**final_fields(setting, model))


def final_outputs(methods, settings, points):
    """Paths of the final-model results of :meth:`enkcvs.pipeline.plan.Plan.final_models`."""
    return [final_path(setting, model) for setting, model in PLAN.final_models(methods, settings, points)]


def review_sheet(dataset):
    """The review sheet files of a dataset's merged label-issue ranking: Markdown or PNG and PDF."""
    return rules.review_markdown.output if PLAN.markdown_review(dataset) else rules.review_images.output


def get_issue_inputs(wildcards):
    """The prepared dataset, and the main (K, M)'s M x K held-out predictions and noisy labels of one (dataset,
    noise) that a ranking reads: of the wildcard seed (one seed's ranking), else of every seed (the merged one)."""
    [(K, M, t)] = PLAN.main_point(wildcards.dataset)
    seeds = [wildcards.seed] if "seed" in wildcards.keys() else config["seeds"]
    folds = {"dataset": wildcards.dataset, "noise": wildcards.noise, "K": K}
    return {
        "dataset": rules.prepare_dataset.output.dataset.format(dataset=wildcards.dataset),
        "predictions": expand(
            rules.train_fold.output.predictions, **folds, seed=seeds, m=range(1, M + 1), k=range(1, K + 1)
        ),
        "labels": expand(rules.inject_noise.output.labels, **folds, seed=seeds),
    }


def get_issue_threshold(wildcards):
    """t of the dataset's main (K, M, t): the votes per seed a merged ranking keeps a sample with."""
    [(K, M, t)] = PLAN.main_point(wildcards.dataset)
    return t


def get_oof_inputs(wildcards):
    """The files of one set of the user's own out-of-fold predictions (``oof.<name>``)."""
    entry = config["oof"][wildcards.name]
    inputs = {"probabilities": entry["probabilities"], "labels": entry["labels"]}
    if entry.get("true_labels"):
        inputs["true_labels"] = entry["true_labels"]
    return inputs


def get_oof_settings(wildcards):
    """Columns and threshold of ``oof.<name>`` (the file paths are inputs)."""
    entry = config["oof"][wildcards.name]
    return canonical(
        {key: value for key, value in entry.items() if key not in ("probabilities", "labels", "true_labels")}
    )


def get_final_output():
    """The dataset summary always; Table 3 when some dataset is compared with the paper's; the noise table, the
    training jobs' time and memory and the confident-learning comparison when some run injects noise (runs on 'real'
    noise have no true labels to score), Table 1 and the theory figure when it also selects; Table 2 (the ablation
    ladder, the clean test curves when asked for, and E-NKCVS against the other methods paired by seed where it has
    others) when such a run also has a test set; Figure 1 when enabled; label issues of the datasets that ask for them
    and of the user's own OOF sets."""
    outputs = list(rules.dataset_summary.output)
    if PLAN.compares_with_the_paper():
        outputs += rules.table3.output
    injected = PLAN.main_settings(real=False)
    if injected:
        outputs += [*rules.noise_table.output, *rules.resource_usage.output]
        if PLAN.selects():
            outputs += [*rules.table1.output, *rules.theory_figure.output]
    if PLAN.evaluated(injected):
        outputs += rules.table2.output
        if "enkcvs" in config["methods"] and len(config["methods"]) > 1:
            outputs += rules.matched.output
        if get_test_curve_results(None):
            outputs += rules.test_curves.output
        if config["ablation"]:
            outputs += rules.ablation.output
    if PLAN.sensitivity["enabled"]:
        outputs += rules.sensitivity_figure.output
    if config["compare_confident_learning"] and injected:
        outputs += rules.confident_learning_report.output
        outputs += rules.ranking_report.output
    for name in PLAN.issue_datasets():
        noises = PLAN.merged_issue_noise(name)
        outputs += expand(rules.label_issues.output, dataset=name, noise=DATASETS[name]["noise"], seed=config["seeds"])
        outputs += expand(rules.merged_label_issues.output, dataset=name, noise=noises)
        outputs += expand(review_sheet(name), dataset=name, noise=noises)
        if not PLAN.markdown_review(name):
            outputs += expand(
                rules.review_group_images.output,
                dataset=name,
                noise=noises,
                group=SOURCES[DATASETS[name]["source"]].id_groups,
            )
        if config["compare_confident_learning"] and "real" in DATASETS[name]["noise"]:
            outputs += expand(rules.compare_real_label_issues.output, dataset=name, noise="real")
    outputs += expand(rules.select_out_of_fold.output, name=sorted(config["oof"]))
    return outputs
