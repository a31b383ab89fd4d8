"""``enkcvs find-issues --probabilities`` against cleanlab on the same single set of probabilities, from the records
``benchmarks/given_probabilities.py`` writes: on each set (data and the model behind the probabilities), the review
list's F1 over cleanlab's ``find_label_issues`` F1 and the ranking's P@k over the best of cleanlab's three scores,
means over the (noise, seed) runs, held against :data:`FLOOR`; and the same ratios for every score, which chose the
default."""

import pandas as pd

#: The share of cleanlab's F1 and of its best P@k the command's list and ranking keep on every set.
FLOOR = 0.95
SET = ["data", "probabilities"]


def runs_frame(record: dict) -> pd.DataFrame:
    """One row per run: the set, noise and seed; ``f1 <score>`` and ``p@k <score>`` of the command with each score;
    ``f1 cleanlab`` (find_label_issues) and ``p@k cleanlab <method>`` of each of its scores."""
    rows = []
    for run in record["runs"]:
        row = {key: run[key] for key in (*SET, "kind", "noise", "seed", "given_probability_zero")}
        for score, scores in run["command"].items():
            row |= {f"f1 {score}": scores["f1"], f"p@k {score}": scores["precision_at_errors"]}
        row["f1 cleanlab"] = run["cleanlab"]["find_label_issues"]["f1"]
        row |= {f"p@k cleanlab {m}": value for m, value in run["cleanlab"].items() if m != "find_label_issues"}
        rows.append(row)
    return pd.DataFrame(rows)


def ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """Per set, means over its runs, and each score's ``f1 ratio <score>`` (over cleanlab's list) and ``p@k ratio
    <score>`` (over the best of cleanlab's scores on that set, ``p@k cleanlab best``)."""
    means = frame.groupby(SET, sort=False).mean(numeric_only=True).drop(columns="seed")
    theirs = [column for column in means if column.startswith("p@k cleanlab ")]
    means["p@k cleanlab best"] = means[theirs].max(axis=1)
    for column in [c for c in means if c.startswith("p@k ") and c != "p@k cleanlab best"]:
        means[f"p@k ratio {column[4:]}"] = means[column] / means["p@k cleanlab best"]
    for column in [c for c in means if c.startswith("f1 ") and c != "f1 cleanlab"]:
        means[f"f1 ratio {column[3:]}"] = means[column] / means["f1 cleanlab"]
    return means


def floor_table(record: dict, *, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per set, the default score's list F1 beside cleanlab's and its ranking's P@k beside cleanlab's best, their
    ratios, and whether both are at least :data:`FLOOR`; ``frame``, the record's :func:`runs_frame` where at hand."""
    score = record["settings"]["default_score"]
    frame = runs_frame(record) if frame is None else frame
    means = ratios(frame)
    theirs = [column for column in means if column.startswith("p@k cleanlab ") and column != "p@k cleanlab best"]
    table = pd.DataFrame(
        {
            "runs": frame.groupby(SET, sort=False).size(),
            "given label's P = 0": means["given_probability_zero"],
            "list F1": means[f"f1 {score}"],
            "cleanlab F1": means["f1 cleanlab"],
            "F1 ratio": means[f"f1 ratio {score}"],
            "P@k": means[f"p@k {score}"],
            "cleanlab's best P@k": means["p@k cleanlab best"],
            "its score": means[theirs].idxmax(axis=1).str.removeprefix("p@k cleanlab "),
            "P@k ratio": means[f"p@k ratio {score}"],
        }
    )
    table[f"at least {FLOOR:g} x"] = (table["F1 ratio"] >= FLOOR) & (table["P@k ratio"] >= FLOOR)
    return table.reset_index()


def score_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Each score, the command's and cleanlab's (P@k only: cleanlab's list is one), over the sets of a record's
    :func:`runs_frame`: on how many sets it falls below :data:`FLOOR` of cleanlab, its worst and its mean ratio."""
    means = ratios(frame)
    rows = []
    for column in [c for c in means if c.startswith(("p@k ratio ", "f1 ratio "))]:
        measure, score = column.split(" ratio ")
        rows.append(
            {
                "score": score.replace("cleanlab ", "cleanlab's ")
                if score.startswith("cleanlab")
                else f"--score {score}",
                "of": "list F1" if measure == "f1" else "ranking P@k",
                f"sets below {FLOOR:g} x": int((means[column] < FLOOR).sum()),
                "worst ratio": means[column].min(),
                "mean ratio": means[column].mean(),
            }
        )
    return pd.DataFrame(rows).sort_values(["of", "score"], kind="stable").reset_index(drop=True)


def fewest_below(scores: pd.DataFrame) -> list[str]:
    """The command's scores that fall below :data:`FLOOR` on the fewest sets of a :func:`score_table`, list F1 and
    ranking P@k counted together."""
    below = scores[scores["score"].str.startswith("--score ")].groupby("score")[f"sets below {FLOOR:g} x"].sum()
    return [score.removeprefix("--score ") for score in below.index[below == below.min()]]


def summary(record: dict) -> str:
    """Both tables as Markdown."""
    frame = runs_frame(record)
    return (
        f"{floor_table(record, frame=frame).to_markdown(index=False, floatfmt='.3f')}\n\n"
        f"{score_table(frame).to_markdown(index=False, floatfmt='.3f')}"
    )
