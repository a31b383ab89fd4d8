import re
import sys
from pathlib import Path
from types import SimpleNamespace

from snakemake.exceptions import WorkflowError

# The library lives in src/. Snakemake itself imports it from there, whatever environment it runs in; jobs import it
# through the link workflow/scripts/enkcvs -> src/enkcvs (Snakemake puts a script's folder on its sys.path), so a
# conda env needs only third-party packages.
sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from enkcvs.data.sources import SOURCES
from enkcvs.data.text import checkpoint_slug
from enkcvs.method.methods import BASELINE_METHODS, GAMMA_METHODS, SELECTION_METHODS
from enkcvs.training.recipe import baseline_recipe, recipe_params
from enkcvs.method.methods import ABLATION_LADDER
from enkcvs.pipeline.config import (
    FinalModel,
    finals_jobs,
    run_config_problems,
    selection_jobs,
    trains_stacked,
)

_problems = run_config_problems(
    config,
    config_files=workflow.configfiles,
    schema=Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml",
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


SELECTION = config["selection"]
SENSITIVITY = config["sensitivity"]
DATASETS = {name: dataset for name, dataset in config["datasets"].items() if dataset["enabled"]}


# What each training job asks of a cluster besides memory: config gpu (resources are no rerun trigger, so changing
# them retrains nothing). The SLURM executor turns gpu=N into --gpus=N, and adds the model as --gpus=MODEL:N.
# A job that asked for GPUs and sees none fails unless cpu_fallback is 1 (config gpu.allow_cpu_fallback).
TRAINING_GPUS = {
    "gpu": config["gpu"]["per_training_job"],
    "cpu_fallback": int(config["gpu"]["allow_cpu_fallback"]),
}
if config["gpu"]["model"] is not None:
    TRAINING_GPUS["gpu_model"] = config["gpu"]["model"]


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
    """The options a dataset's source takes; a relative root or path is resolved here (against the working
    directory), where jobs and config agree on it."""
    options = dict(config["datasets"][wildcards.dataset]["source_options"])
    for key in ("root", "path"):
        if key in options:
            options[key] = str(Path(options[key]).expanduser().resolve())
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


def get_baseline_options(wildcards):
    """Hyperparameters of one baseline on one dataset, whether it mixes included, as configured (co-teaching's
    ``nominal`` or ``actual`` forget rate is resolved by the job: :func:`enkcvs.training.final.resolve_forget_rate`); its
    schedule goes into its recipe (:func:`get_baseline_recipe`)."""
    options = config["datasets"][wildcards.dataset]["baselines"].get(wildcards.baseline, {})
    return canonical({key: value for key, value in options.items() if key != "schedule"})


def curve_methods(dataset):
    """The configured methods of ``dataset`` whose options ask for a clean test curve."""
    baselines = DATASETS[dataset]["baselines"]
    return [method for method in config["methods"] if baselines.get(method, {}).get("test_curve", False)]


def get_recipe(wildcards):
    """The wildcard dataset's training recipe, as a training job's params: a recipe field added later appears only
    where it is set (:func:`enkcvs.training.recipe.recipe_params`), so that adding it retrains nothing."""
    return canonical(recipe_params(config["datasets"][wildcards.dataset]["recipe"]))


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


def get_final_selection(wildcards):
    """The kept set a final model of a selection method trains from: confident learning's for prune-and-retrain,
    E-NKCVS's otherwise."""
    selection = (
        rules.confident_learning_selection.output.selection
        if wildcards.method == "cl_prune"
        else rules.select_samples.output.selection
    )
    fields = ("dataset", "noise", "seed", "K", "M", "t")
    return selection.format(**{field: getattr(wildcards, field) for field in fields})


def get_fold_predictions(wildcards):
    """The M x K held-out prediction tables that one selection (K, M, t) votes over (str.format, not expand(): it
    is called for every selection and every fold benchmark of the report, and is 7x faster)."""
    setting = {"dataset": wildcards.dataset, "noise": wildcards.noise, "seed": wildcards.seed, "K": wildcards.K}
    pattern, folds = rules.train_fold.output.predictions, range(1, int(wildcards.K) + 1)
    return [pattern.format(**setting, m=m, k=k) for m in range(1, int(wildcards.M) + 1) for k in folds]


def main_settings(*, real):
    """(dataset, noise, seed) of every main run of the enabled datasets: with injected noise (Tables 1-2) or, with
    ``real``, on labels that are noisy already (Table 3)."""
    return [
        (name, noise, seed)
        for name, dataset in DATASETS.items()
        for noise in dataset["noise"]
        if (noise == "real") == real
        for seed in config["seeds"]
    ]


def main_point(dataset):
    """The main (K, M, t) of a dataset: its own ``selection`` or the global one."""
    selection = config["datasets"][dataset].get("selection", SELECTION)
    return [(selection["K"], selection["M"], selection["t"])]


def sensitivity_points(dataset):
    """(K, M, t) of Figure 1: K sweeps at M = t = 1 and at the main (M, t); an M sweep at the main K with t = M - 1;
    a t sweep at the main K and M."""
    [(main_K, main_M, main_t)] = main_point(dataset)
    points = {(K, 1, 1) for K in SENSITIVITY["K"]}
    points |= {(K, main_M, main_t) for K in SENSITIVITY["K"]}
    points |= {(main_K, M, M - 1) for M in SENSITIVITY["M"]}
    points |= {(main_K, main_M, t) for t in SENSITIVITY["t"]}
    return sorted(points)


def selection_outputs(output, settings, points, **fields):
    """Paths of a per-selection output for every (dataset, noise, seed) x (K, M, t) of ``points(dataset)``;
    ``fields`` fill the rest."""
    return [
        output.format(dataset=dataset, noise=noise, seed=seed, K=K, M=M, t=t, **fields)
        for dataset, noise, seed in settings
        for K, M, t in points(dataset)
    ]


def final_models(methods, settings, points):
    """((dataset, noise, seed), FinalModel) of the final models ``methods`` on ``settings``: baselines once per
    setting, selection methods once per (K, M, t) of ``points(dataset)``. CE + mixup only where the dataset's recipe
    mixes (text datasets do not: there it would be CE again)."""
    return [
        ((dataset, noise, seed), FinalModel(method, point))
        for method in methods
        for dataset, noise, seed in settings
        if method != "ce_mixup" or config["datasets"][dataset]["recipe"]["mixup_alpha"] is not None
        for point in ([None] if method in BASELINE_METHODS else points(dataset))
    ]


def final_path(setting, model, pattern_only=False):
    """The result file of a final ``model`` of ``setting`` (dataset, noise, seed); ``pattern_only``: with the
    setting's wildcards left in it."""
    dataset, noise, seed = ("{dataset}", "{noise}", "{seed}") if pattern_only else setting
    if model.point is None:
        result = rules.train_final_baseline.output.result
        return result.format(dataset=dataset, noise=noise, seed=seed, baseline=model.method)
    K, M, t = model.point
    result = rules.train_final_selected.output.result
    return result.format(dataset=dataset, noise=noise, seed=seed, K=K, M=M, t=t, method=model.method)


def final_outputs(methods, settings, points):
    """Paths of the final-model results of :func:`final_models`."""
    return [final_path(setting, model) for setting, model in final_models(methods, settings, points)]


def sensitivity_settings():
    if not SENSITIVITY["enabled"]:
        return []
    return [(SENSITIVITY["dataset"], noise, seed) for noise in SENSITIVITY["noise"] for seed in SENSITIVITY["seeds"]]


def reported_final_models():
    """((dataset, noise, seed), FinalModel) of every final model the report reads: Tables 2 and 3, Figure 1 and the
    ablation ladder (once each)."""
    models = final_models(
        config["methods"], evaluated(main_settings(real=False) + main_settings(real=True)), main_point
    )
    models += final_models(["ss_only"], sensitivity_settings(), sensitivity_points)
    if config["ablation"]:
        models += final_models(ABLATION_LADDER, evaluated(main_settings(real=False)), main_point)
    return list(dict.fromkeys(models))


def evaluated(settings):
    """The settings whose dataset has a clean test set (a user's own data has none: no final models for it)."""
    return [setting for setting in settings if SOURCES[config["datasets"][setting[0]]["source"]].has_test]


def issue_datasets():
    return [name for name, dataset in DATASETS.items() if dataset["find_issues"]]


def markdown_review(dataset):
    """Whether a dataset's review sheet is Markdown (texts, and feature tables stored as (N, 1, 1, F) images) rather
    than a figure of its images."""
    source = config["datasets"][dataset]["source"]
    return source == "table" or SOURCES[source].modality == "text"


def review_sheet(dataset):
    """The review sheet files of a dataset's merged label-issue ranking: Markdown or PNG and PDF."""
    return rules.review_markdown.output if markdown_review(dataset) else rules.review_images.output


def get_issue_selection(wildcards):
    """The selection one seed's label issues are read from: the dataset's main (K, M, t)."""
    [(K, M, t)] = main_point(wildcards.dataset)
    return rules.select_samples.output.selection.format(
        dataset=wildcards.dataset, noise=wildcards.noise, seed=wildcards.seed, K=K, M=M, t=t
    )


def get_merged_issue_inputs(wildcards):
    """Every seed's M x K held-out predictions (main K, M) and noisy labels of one (dataset, noise)."""
    [(K, M, t)] = main_point(wildcards.dataset)
    folds = {"dataset": wildcards.dataset, "noise": wildcards.noise, "K": K}
    return {
        "dataset": rules.prepare_dataset.output.dataset.format(dataset=wildcards.dataset),
        "predictions": expand(
            rules.train_fold.output.predictions, **folds, seed=config["seeds"], m=range(1, M + 1), k=range(1, K + 1)
        ),
        "labels": expand(rules.inject_noise.output.labels, **folds, seed=config["seeds"]),
    }


def get_issue_threshold(wildcards):
    """t of the dataset's main (K, M, t): the votes per seed a merged ranking keeps a sample with."""
    [(K, M, t)] = main_point(wildcards.dataset)
    return t


def merged_issue_noise(dataset):
    """The noise settings of ``dataset`` whose seeds share the given labels, so that one ranking merges them: the
    labels as they are (``real``), or any setting when there is one seed."""
    return [noise for noise in DATASETS[dataset]["noise"] if noise == "real" or len(config["seeds"]) == 1]


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


def selects():
    """Whether the run votes a selection: some method trains on one, or the ablation ladder climbs to E-NKCVS.
    A run of baselines alone trains no fold models, and so has no Table 1."""
    return config["ablation"] or any(method in SELECTION_METHODS for method in config["methods"])


def compares_with_the_paper():
    """Whether some enabled dataset is compared with one of the paper's (``paper_name``): only then does the run
    render Table 3, the paper's real-world rows; a run on the user's own data renders no paper table."""
    return any(dataset["paper_name"] is not None for dataset in DATASETS.values())


def get_final_output():
    """The dataset summary always; Table 3 when some dataset is compared with the paper's; the noise table, the
    training jobs' time and memory and the confident-learning comparison when some run injects noise (runs on 'real'
    noise have no true labels to score), Table 1 and the theory figure when it also selects; Table 2 (the ablation
    ladder and the clean test curves when asked for) when such a run also has a test set; Figure 1 when enabled; label
    issues of the datasets that ask for them and of the user's own OOF sets."""
    outputs = list(rules.dataset_summary.output)
    if compares_with_the_paper():
        outputs += rules.table3.output
    if main_settings(real=False):
        outputs += [*rules.noise_table.output, *rules.resource_usage.output]
        if selects():
            outputs += [*rules.table1.output, *rules.theory_figure.output]
    if evaluated(main_settings(real=False)):
        outputs += rules.table2.output
        if get_test_curve_results(None):
            outputs += rules.test_curves.output
        if config["ablation"]:
            outputs += rules.ablation.output
    if SENSITIVITY["enabled"]:
        outputs += rules.sensitivity_figure.output
    if config["compare_confident_learning"] and main_settings(real=False):
        outputs += rules.confident_learning_report.output
        outputs += rules.ranking_report.output
    for name in issue_datasets():
        outputs += expand(rules.label_issues.output, dataset=name, noise=DATASETS[name]["noise"], seed=config["seeds"])
        outputs += expand(rules.merged_label_issues.output, dataset=name, noise=merged_issue_noise(name))
        outputs += expand(review_sheet(name), dataset=name, noise=merged_issue_noise(name))
        if not markdown_review(name):
            outputs += expand(
                rules.review_group_images.output,
                dataset=name,
                noise=merged_issue_noise(name),
                group=SOURCES[DATASETS[name]["source"]].id_groups,
            )
        if config["compare_confident_learning"] and "real" in DATASETS[name]["noise"]:
            outputs += expand(rules.compare_real_label_issues.output, dataset=name, noise="real")
    outputs += expand(rules.select_out_of_fold.output, name=sorted(config["oof"]))
    return outputs


def stacked_datasets(key="stacked_folds"):
    """The enabled datasets whose fold models of a selection (config ``stacked_folds``), or whose final models of a
    setting (``stacked_finals``), train as one stacked program."""
    gpus = config["gpu"]["per_training_job"]
    return sorted(name for name, dataset in DATASETS.items() if trains_stacked(config[key], dataset=dataset, gpus=gpus))


def selection_datasets():
    """The enabled datasets whose fold models of a selection train in one job: every one with ``training_jobs:
    setting``, the stacked ones (:func:`stacked_datasets`) otherwise."""
    return sorted(DATASETS) if config["training_jobs"] == "setting" else stacked_datasets()


def fold_iterations():
    """(dataset, noise, seed, K) -> the most iterations M a selection of it votes over, for the datasets of
    :func:`selection_datasets`: the main selection's and, on Figure 1's settings, its study's."""
    grouped, iterations = set(selection_datasets()), {}
    for settings, points in (
        (main_settings(real=False) + main_settings(real=True), main_point),
        (sensitivity_settings(), sensitivity_points),
    ):
        for dataset, noise, seed in settings:
            for K, M, t in points(dataset) if dataset in grouped else []:
                iterations[dataset, noise, seed, K] = max(M, iterations.get((dataset, noise, seed, K), 0))
    return iterations


#: The train_selection rules (enkcvs.pipeline.config.selection_jobs): each trains a selection's M x K folds.
SELECTION_JOBS = selection_jobs(fold_iterations(), stacked=stacked_datasets())


def selection_job(dataset, noise, seed, K):
    """The train_selection rule that writes the fold tables of (dataset, noise, seed, K)."""
    return next(
        group
        for group in SELECTION_JOBS
        if (group.dataset, group.K) == (dataset, int(K)) and noise in group.noises and int(seed) in group.seeds
    )


def dataset_other_than(names):
    """A dataset wildcard pattern matching any name but ``names`` (their files are written by other rules)."""
    excluded = "|".join(map(re.escape, names))
    return rf"(?!(?:{excluded})/)[A-Za-z][A-Za-z0-9_]*" if excluded else r"[A-Za-z][A-Za-z0-9_]*"


def finals_datasets():
    """The enabled datasets whose final models of a setting train in one job: every one with ``training_jobs:
    setting``, the stacked ones (``stacked_finals``) otherwise."""
    return sorted(DATASETS) if config["training_jobs"] == "setting" else stacked_datasets("stacked_finals")


def trained_finals():
    """(dataset, noise, seed) -> the final models the report reads of it, for the datasets of
    :func:`finals_datasets`."""
    grouped, models = set(finals_datasets()), {}
    for setting, model in reported_final_models():
        if setting[0] in grouped:
            models.setdefault(setting, []).append(model)
    return models


#: The train_finals rules (enkcvs.pipeline.config.finals_jobs): each trains a setting's final models.
FINALS_JOBS = finals_jobs(trained_finals(), stacked=stacked_datasets("stacked_finals"))


def finals_job(dataset, noise, seed):
    """The train_finals rule that writes the final results of (dataset, noise, seed)."""
    return next(job for job in FINALS_JOBS if job.dataset == dataset and noise in job.noises and int(seed) in job.seeds)


def get_gamma(wildcards):
    """gamma of a final model trained on a selection: the config's for the methods whose loss has it, else None."""
    return config["gamma"] if wildcards.method in GAMMA_METHODS else None


def finals_params(job):
    """Params function of a train_finals rule: for each of ``job``'s models, what its own train_final_* job's params
    and selection input would be (the wildcards of that job added to its provenance)."""

    def models(wildcards):
        setting = {"dataset": wildcards.dataset, "noise": wildcards.noise, "seed": wildcards.seed}
        params = []
        for model in job.models:
            if model.point is None:
                own = SimpleNamespace(**setting, baseline=model.method)
                params.append(
                    {
                        "method": model.method,
                        "recipe": get_baseline_recipe(own),
                        "gamma": None,
                        "options": get_baseline_options(own),
                        "selection": None,
                        "wildcards": {"baseline": model.method},
                    }
                )
                continue
            K, M, t = model.point
            own = SimpleNamespace(**setting, K=str(K), M=str(M), t=str(t), method=model.method)
            params.append(
                {
                    "method": model.method,
                    "recipe": get_recipe(own),
                    "gamma": get_gamma(own),
                    "options": {},
                    "selection": get_final_selection(own),
                    "wildcards": {"K": str(K), "M": str(M), "t": str(t), "method": model.method},
                }
            )
        return params

    return models


def finals_selections(job):
    """Input function of a train_finals rule: the selections its models train from."""
    return lambda wildcards: sorted({model["selection"] for model in finals_params(job)(wildcards)} - {None})
