# Input functions of the report rules (report.smk): which result files each table and figure is built from. A
# file of its own because Snakemake's linter wants rules and functions apart; included just before report.smk,
# whose resource_usage rule calls get_final_benchmarks while it is parsed.


def get_table1_metrics(wildcards):
    if not selects():
        return []
    return selection_outputs(rules.select_samples.output.metrics, main_settings(real=False), main_point)


def get_noise_labels(wildcards):
    """The noisy-label file of every main setting with injected noise, in the order of ``main_settings``."""
    return [
        rules.inject_noise.output.labels.format(dataset=dataset, noise=noise, seed=seed)
        for dataset, noise, seed in main_settings(real=False)
    ]


def get_noise_label_datasets(wildcards):
    """The dataset of each file of :func:`get_noise_labels`, in the same order (the files do not name it)."""
    return [dataset for dataset, noise, seed in main_settings(real=False)]


def get_table2_results(wildcards):
    return final_outputs(config["methods"], evaluated(main_settings(real=False)), main_point)


def get_test_curve_results(wildcards):
    """The final models that record a clean test curve: the configured baselines whose dataset's options ask for one
    (``baselines.<method>.test_curve``), at every main setting with known true labels and a test set."""
    return [
        path
        for dataset in DATASETS
        for path in final_outputs(
            curve_methods(dataset), [s for s in evaluated(main_settings(real=False)) if s[0] == dataset], main_point
        )
    ]


def get_ablation_results(wildcards):
    """Every rung of the ablation ladder, for every main setting with known true labels and a test set."""
    return final_outputs(ABLATION_LADDER, evaluated(main_settings(real=False)), main_point)


def get_table3_results(wildcards):
    return final_outputs(config["methods"], evaluated(main_settings(real=True)), main_point)


def get_sensitivity_metrics(wildcards):
    return selection_outputs(rules.select_samples.output.metrics, sensitivity_settings(), sensitivity_points)


def get_sensitivity_results(wildcards):
    return final_outputs(["ss_only"], sensitivity_settings(), sensitivity_points)


def get_theory_metrics(wildcards):
    return sorted(set(get_table1_metrics(wildcards) + get_sensitivity_metrics(wildcards)))


def benchmark_of(training, output, path):
    """The benchmark file of the ``training`` rule's job that writes ``path`` (a file of its ``output`` pattern): its
    ``benchmark:`` directive filled with that job's wildcards."""
    return training.benchmark.format(**output.match(path).groupdict())


def get_fold_benchmarks(selected):
    """The benchmark files of the fold models behind the report, written by jobs of one fold each or (``selected``)
    of one selection each (train_selection_*): those of every selection of Table 1 and Figure 1 and of every final
    model trained on a selection."""

    def benchmarks(wildcards):
        selections = [rules.select_samples.output.metrics, rules.train_final_selected.output.result]
        files = set()
        for path in get_theory_metrics(wildcards) + final_results():
            match = next(filter(None, (pattern.match(path) for pattern in selections)), None)
            if match and (match["dataset"] in selection_datasets()) == selected:
                files.update(fold_benchmarks(SimpleNamespace(**match.groupdict())))
        return sorted(files)

    return benchmarks


def fold_benchmarks(selection):
    """The benchmark files of the jobs writing the M x K fold tables of one ``selection`` (its wildcards): one per
    fold (train_fold), or the one job of a dataset whose selections train in one job (train_selection_*)."""
    if selection.dataset not in selection_datasets():
        fold = rules.train_fold
        return [benchmark_of(fold, fold.output.predictions, path) for path in get_fold_predictions(selection)]
    group = selection_job(selection.dataset, selection.noise, selection.seed, selection.K)
    setting = {"dataset": selection.dataset, "noise": selection.noise, "seed": selection.seed}
    return [getattr(rules, group.rule).benchmark.format(**setting)]


def final_results():
    """Every final model's result file the report reads."""
    return sorted({final_path(setting, model) for setting, model in reported_final_models()})


def get_final_benchmarks(selected):
    """The benchmark files of the final models of the report trained in a job of their own, on a selection or
    (``selected`` False) not."""

    def benchmarks(wildcards):
        # a baseline's pattern also matches a selected model's path ({baseline} spans K/M/t), never the reverse
        on_selection = rules.train_final_selected.output.result
        training = rules.train_final_selected if selected else rules.train_final_baseline
        return sorted(
            benchmark_of(training, training.output.result, path)
            for setting, model in reported_final_models()
            if setting[0] not in finals_datasets()
            and bool(on_selection.match(path := final_path(setting, model))) == selected
        )

    return benchmarks


def get_finals_benchmarks(wildcards):
    """The benchmark files of the jobs that train a setting's final models together (train_finals_*)."""
    return sorted(
        getattr(rules, finals_job(*setting).rule).benchmark.format(
            dataset=setting[0], noise=setting[1], seed=setting[2]
        )
        for setting in trained_finals()
    )


def get_paper_names(wildcards):
    """Our dataset -> the paper's dataset its report rows are compared with (None: no comparison)."""
    return {name: dataset["paper_name"] for name, dataset in sorted(DATASETS.items())}


def get_prepared_datasets(wildcards):
    """Every enabled dataset's prepared file, in the order of ``sorted(DATASETS)``."""
    return [rules.prepare_dataset.output.dataset.format(dataset=name) for name in sorted(DATASETS)]
