"""Views of a recorded run's label-issue rankings (``issues/<dataset>/<noise>/`` of the record,
:func:`enkcvs.recording.record.keep_label_issues`): the sentences with numbers that a page says about them, generated."""

from pathlib import Path

import pandas as pd


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _groups(flagged: pd.DataFrame, id_column: str | None) -> str:
    """Where the flagged samples come from, when their ids name a group as their first word (``train 12``)."""
    if id_column is None or not flagged[id_column].astype(str).str.contains(" ").all():
        return ""
    groups = flagged[id_column].astype(str).str.split(" ").str[0].value_counts(sort=False)
    return ": " + " and ".join(f"{count:,} of its {group} samples" for group, count in groups.items())


def label_issues(run: Path) -> str:
    """Per merged ranking of the run: how many samples E-NKCVS flags, and where cleanlab ranked the same labels
    (``confident_learning.csv``), how many it flags, how many both flag, and how far the two top-k lists agree."""
    rankings = sorted((run / "issues").glob("*/*/label_issues.csv"))
    if not rankings:
        raise FileNotFoundError(
            f"{run} holds no label-issue ranking (issues/<dataset>/<noise>/label_issues.csv): "
            "record a run with find_issues: true"
        )
    paragraphs = []
    for path in rankings:
        dataset, noise = path.parent.parent.name, path.parent.name
        flagged = pd.read_csv(path)
        iterations = int(flagged["iterations"].iloc[0]) if len(flagged) else None
        named = [column for column in flagged.columns[1:2] if column != "given_label"]
        text = (
            f"`{dataset}`, noise `{noise}`: E-NKCVS flags {_count(len(flagged), 'sample')}"
            f"{_groups(flagged, named[0] if named else None)}"
            + (f" (selected in fewer than t of {iterations} iterations)" if iterations else "")
            + "."
        )
        agreement = path.parent / "confident_learning.csv"
        if agreement.exists():
            table = pd.read_csv(agreement).set_index("set")
            flags = table.loc["flagged"]
            tops = "; ".join(
                f"of the {row['E-NKCVS']:,} each ranks most likely mislabelled, {row['both']:,} are the same samples"
                for name, row in table.drop(index="flagged").iterrows()
            )
            text += (
                f" cleanlab's `find_label_issues` on the same out-of-fold probabilities flags "
                f"{_count(int(flags['cleanlab']), 'sample')}, {flags['both']:,} of them flagged by both; {tops}."
            )
        paragraphs.append(text)
    return "\n\n".join(paragraphs) + "\n"
