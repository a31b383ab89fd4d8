# Input functions of the report rules (report.smk): which result files each table and figure is built from, as
# enkcvs.pipeline.plan plans them. A file of its own because Snakemake's linter wants rules and functions apart;
# included just before report.smk, whose resource_usage rule calls the benchmark functions while it is parsed.


def get_table1_metrics(wildcards):
    if not PLAN.selects():
        return []
    return selection_outputs(rules.select_samples.output.metrics, PLAN.main_settings(real=False), PLAN.main_point)


def get_noise_labels(wildcards):
    """The noisy-label file of every main setting with injected noise, in the order of ``main_settings``."""
    return [
        rules.inject_noise.output.labels.format(dataset=dataset, noise=noise, seed=seed)
        for dataset, noise, seed in PLAN.main_settings(real=False)
    ]


def get_noise_label_datasets(wildcards):
    """The dataset of each file of :func:`get_noise_labels`, in the same order (the files do not name it)."""
    return [dataset for dataset, noise, seed in PLAN.main_settings(real=False)]


def get_table2_results(wildcards):
    return final_outputs(config["methods"], PLAN.evaluated(PLAN.main_settings(real=False)), PLAN.main_point)


def get_test_curve_results(wildcards):
    """The final models whose clean test curve the report draws (every final model records one): the configured
    baselines whose dataset's options ask for it (``baselines.<method>.test_curve``), at every main setting with known
    true labels and a test set."""
    settings = PLAN.evaluated(PLAN.main_settings(real=False))
    return [
        path
        for dataset in DATASETS
        for path in final_outputs(
            PLAN.curve_methods(dataset), [s for s in settings if s[0] == dataset], PLAN.main_point
        )
    ]


def get_ablation_results(wildcards):
    """Every rung of the ablation ladder, for every main setting with known true labels and a test set."""
    return final_outputs(ABLATION_LADDER, PLAN.evaluated(PLAN.main_settings(real=False)), PLAN.main_point)


def get_table3_results(wildcards):
    return final_outputs(config["methods"], PLAN.evaluated(PLAN.main_settings(real=True)), PLAN.main_point)


def get_sensitivity_metrics(wildcards):
    return selection_outputs(rules.select_samples.output.metrics, PLAN.sensitivity_settings(), PLAN.sensitivity_points)


def get_sensitivity_results(wildcards):
    return final_outputs(["ss_only"], PLAN.sensitivity_settings(), PLAN.sensitivity_points)


def get_theory_metrics(wildcards):
    return sorted(set(get_table1_metrics(wildcards) + get_sensitivity_metrics(wildcards)))


def get_fold_benchmarks(stacked):
    """The benchmark files of the jobs that trained the fold models behind the report: a train_fold job's per fold,
    or (``stacked``) a train_stack job's per (dataset, noise, seed, K) of the datasets whose folds train stacked."""

    def benchmarks(wildcards):
        stacked_datasets, files = set(PLAN.stacked_datasets()), set()
        for (dataset, noise, seed), (K, M, t) in PLAN.selections:
            if (dataset in stacked_datasets) != stacked:
                continue
            setting = {"dataset": dataset, "noise": noise, "seed": seed, "K": K}
            if stacked:
                files.add(rules.train_stack.benchmark.format(**setting))
            else:
                files.update(
                    rules.train_fold.benchmark.format(**setting, m=m, k=k)
                    for m in range(1, M + 1)
                    for k in range(1, K + 1)
                )
        return sorted(files)

    return benchmarks


def get_final_benchmarks(rule):
    """The benchmark files of the report's final models that the rule named ``rule`` trains."""

    def benchmarks(wildcards):
        return sorted(
            {
                final_rule(model).benchmark.format(**final_fields(setting, model))
                for setting, model in PLAN.reported_final_models()
                if final_rule(model) is getattr(rules, rule)
            }
        )

    return benchmarks


def get_incv_benchmarks(wildcards):
    """The benchmark files of the INCV selections behind the report's INCV models."""
    return sorted(
        {
            rules.select_incv.benchmark.format(dataset=dataset, noise=noise, seed=seed)
            for (dataset, noise, seed), model in PLAN.reported_final_models()
            if model.method == "incv"
        }
    )


def get_ensemble_member_benchmarks(wildcards):
    """The benchmark files of the members of the report's CE + mixup ensembles."""
    return sorted(
        {
            rules.train_ensemble_member.benchmark.format(dataset=dataset, noise=noise, seed=seed, member=member)
            for (dataset, noise, seed), model in PLAN.reported_final_models()
            if model.method == "ce_mixup_ensemble"
            for member in range(1, budget_members(num_folds=model.point[0], iterations=model.point[1]) + 1)
        }
    )


def get_paper_names(wildcards):
    """Our dataset -> the paper's dataset its report rows are compared with (None: no comparison)."""
    return {name: dataset["paper_name"] for name, dataset in sorted(DATASETS.items())}


def get_prepared_datasets(wildcards):
    """Every enabled dataset's prepared file, in the order of ``sorted(DATASETS)``."""
    return [rules.prepare_dataset.output.dataset.format(dataset=name) for name in sorted(DATASETS)]
