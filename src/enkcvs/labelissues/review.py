"""The review sheet of a label-issue table (:func:`enkcvs.labelissues.issues.label_issue_table`, rows in the data's
order): its top N samples, most likely mislabelled first, for a person to check at a glance. Images become a figure
of tiles (PNG and PDF), texts and feature rows a Markdown table; each entry shows the rank, the sample's name, the
given and the suggested class, the votes and the label score. Bad input raises ValueError or FileNotFoundError before
anything is drawn; matplotlib is imported where a figure is drawn.
"""

import os
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.io import PathLike, atomic_path, save_figure
from enkcvs.labelissues.issues import in_rank_order

DEFAULT_TOP = 36  # samples a sheet shows (6 x 6 tiles)
TEXT_WIDTH = 120  # characters of a text shown in a Markdown sheet
SHOWN_FEATURES = 20  # feature columns shown in a Markdown sheet of a table
SHOWN_ROWS = 5  # offending rows named in an error
CHANNELS = (1, 3, 4)  # grey, RGB, RGBA
TILE_INCHES = 2.3  # side of one tile; its title holds LINE_CHARS characters a line at TITLE_POINTS
TITLE_POINTS = 8
LINE_CHARS = 30
NAME_LINES = 2  # a long class name wraps onto this many lines, then is cut with an ellipsis
ISSUE_COLOUR, KEPT_COLOUR = "#d62728", "#bbbbbb"  # tile frames: in the review list, not in it

#: What every sheet's legend says about its fields.
LEGEND = (
    "votes: how many of the M iterations predict the given label; label score: the given label's mean probability, "
    "low = likely mislabelled; suggested: the label the iterations predict most often; review list: the likely label "
    "errors to check, as many as confident learning estimates; kept: selected in at least t iterations, the paper's "
    "set to train on"
)


def image_layout(shape: Sequence[int]) -> str:
    """``"NHW"`` (grey), ``"NHWC"`` (C in 1, 3, 4 last; first choice) or ``"NCHW"`` for an image batch of ``shape``;
    ValueError for any other shape."""
    shape = tuple(shape)
    if len(shape) == 3 and min(shape[1:]) > 1:
        return "NHW"
    if len(shape) == 4 and min(shape[1:]) > 0:
        if shape[3] in CHANNELS:
            return "NHWC"
        if shape[1] in CHANNELS:
            return "NCHW"
    raise ValueError(
        f"an image batch is (N, H, W), (N, H, W, C) or (N, C, H, W) with C in {CHANNELS}; got shape "
        f"{shape}. Fix: save the images as one such array (np.save), one image per labelled sample"
    )


def display_image(image: np.ndarray, *, channels_first: bool = False) -> np.ndarray:
    """``image`` (H, W), (H, W, C) or, ``channels_first``, (C, H, W) ready to draw: (H, W) or (H, W, 3 or 4) in [0, 1];
    uint8 and uint16 scaled by their maximum, values in [0, 1] kept, any other range stretched to [0, 1]."""
    image = np.asarray(image)
    if channels_first and image.ndim == 3:
        image = np.moveaxis(image, 0, -1)
    if image.ndim == 3 and image.shape[-1] == 1:
        image = image[..., 0]
    if image.dtype in (np.uint8, np.uint16):
        return image / float(np.iinfo(image.dtype).max)
    image = np.nan_to_num(image.astype(float))
    low, high = image.min(initial=0.0), image.max(initial=0.0)
    if low >= 0.0 and high <= 1.0:
        return image
    return (image - low) / (high - low) if high > low else np.zeros_like(image)


def read_image(path: PathLike, *, row: int) -> np.ndarray:
    """The image file ``path`` of the sample in ``row`` (1 = the first) as uint8 (H, W) or (H, W, 3); errors naming
    the file and the row."""
    from PIL import Image, UnidentifiedImageError

    fix = "Fix: correct the path (relative paths are read from the labels file's folder) or the file"
    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("L" if image.mode in ("1", "L", "I", "I;16", "F") else "RGB"))
    except FileNotFoundError as error:
        raise FileNotFoundError(f"no image file at {path} (row {row}, 1 = the first). {fix}") from error
    except (UnidentifiedImageError, OSError, ValueError) as error:
        raise ValueError(
            f"the image file {path} (row {row}, 1 = the first) is unreadable ({type(error).__name__}: {error}). {fix}"
        ) from error


def draw_review_sheet(
    *,
    issues: pd.DataFrame,
    images: np.ndarray | Sequence[str],
    caption: str,
    top: int = DEFAULT_TOP,
    id_column: str | None = None,
    layout: str | None = None,
    root: PathLike = "",
    subset: np.ndarray | None = None,
):
    """The ``top`` most likely mislabelled images in rank order, one tile each, titled with the rank, the sample's
    name, the given and the suggested class, the votes and the label score; a tile in the review list framed red.

    Parameters
    ----------
    issues : the label-issue table, N rows in the data's order.
    images : the N images in sample order, (N, H, W), (N, H, W, C) or (N, C, H, W), or N paths relative to ``root``
        (or absolute); every path must exist, the shown ones are read.
    caption : the figure's title; top : how many samples to show (>= 1).
    id_column : the column of ``issues`` naming the samples; None: its first.
    layout : ``"NHW"``, ``"NHWC"`` or ``"NCHW"`` for an array; None: :func:`image_layout`.
    subset : (N,) bool, show only these (e.g. one official split), each with its rank among all; None: all.

    Returns
    -------
    matplotlib.figure.Figure; its i-th axes is the i-th shown sample, titled as its tile.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = _shown(issues, top=top, count=len(images), what="images", subset=subset)
    pictures = _images(images, samples=shown.index.to_numpy(), layout=layout, root=root)
    columns = min(max(len(shown), 3), 6)  # a sheet of one or two tiles keeps room for its caption and legend
    rows = -(-len(shown) // columns)
    named_by = id_column or issues.columns[0]
    titles = [_tile_title(row, named_by=named_by) for row in shown.to_dict("records")]
    title_inches = max(title.count("\n") + 1 for title in titles) * TITLE_POINTS * 1.25 / 72
    figure, axes = plt.subplots(
        rows,
        columns,
        figsize=(TILE_INCHES * columns, (TILE_INCHES + title_inches) * rows),
        squeeze=False,
        layout="constrained",
    )
    for axis in axes.flat[len(shown) :]:
        axis.axis("off")
    for axis, picture, title, flagged in zip(axes.flat, pictures, titles, shown["is_label_issue"]):
        axis.imshow(picture, cmap="gray" if picture.ndim == 2 else None, vmin=0.0, vmax=1.0, interpolation="nearest")
        axis.set_title(title, fontsize=TITLE_POINTS, loc="left")
        axis.set_xticks([])
        axis.set_yticks([])
        for spine in axis.spines.values():
            spine.set_color(ISSUE_COLOUR if flagged else KEPT_COLOUR)
            spine.set_linewidth(3.0 if flagged else 1.0)
    figure.get_layout_engine().set(h_pad=0.12, w_pad=0.08)  # inches between tiles: a title never meets the image above
    of = len(issues) if subset is None else f"{int(np.sum(subset)):,} of the {len(issues):,}"
    legend = f"{_top_of(len(shown), of)} {_set_sizes(issues)} {LEGEND} (red frame)."
    figure.suptitle(
        textwrap.fill(caption, width=int(LINE_CHARS * 1.2 * columns)), fontsize=TITLE_POINTS + 3, fontweight="bold"
    )
    figure.supxlabel(textwrap.fill(legend, width=int(LINE_CHARS * 1.4 * columns)), fontsize=TITLE_POINTS)
    return figure


def write_review_sheet(*, png: PathLike, pdf: PathLike, dpi: int = 150, **sheet) -> None:
    """:func:`draw_review_sheet`'s figure of ``sheet`` (its keyword arguments) as PNG and PDF, atomically."""
    import matplotlib.pyplot as plt

    figure = draw_review_sheet(**sheet)
    save_figure(figure, png=png, pdf=pdf, dpi=dpi)
    plt.close(figure)


def text_sheet(
    *,
    issues: pd.DataFrame,
    texts: Sequence[str] | np.ndarray,
    caption: str,
    top: int = DEFAULT_TOP,
    id_column: str | None = None,
    width: int = TEXT_WIDTH,
) -> str:
    """The ``top`` most likely mislabelled of the (N,) ``texts`` in rank order as Markdown: rank, name, the text (cut
    to ``width`` characters, line breaks shown as ↵), given and suggested class, votes, label score, review list,
    kept; ``issues``, ``caption``, ``top``, ``id_column`` as :func:`draw_review_sheet`."""
    shown = _shown(issues, top=top, count=len(texts), what="texts")
    fields = _fields(shown, named_by=id_column or issues.columns[0])
    fields.insert(2, "text", [_shortened(str(texts[sample]), width=width) for sample in shown.index])
    return _markdown(fields, caption=caption, issues=issues)


def table_sheet(
    *,
    issues: pd.DataFrame,
    features: np.ndarray,
    caption: str,
    feature_names: Sequence[str] | None = None,
    top: int = DEFAULT_TOP,
    id_column: str | None = None,
) -> str:
    """The ``top`` most likely mislabelled rows of ``features`` (N, F) in rank order as Markdown: the fields of
    :func:`text_sheet` without the text, then the first :data:`SHOWN_FEATURES` values under their ``feature_names``
    (F,) (None: ``x[0]``, ...)."""
    features = np.asarray(features).reshape(len(features), -1)
    names = [f"x[{j}]" for j in range(features.shape[1])] if feature_names is None else list(feature_names)
    if len(names) != features.shape[1]:
        raise ValueError(
            f"{len(names)} feature names for {features.shape[1]} features. Fix: name every feature "
            "column once, in order"
        )
    shown = _shown(issues, top=top, count=len(features), what="feature rows")
    fields = _fields(shown, named_by=id_column or issues.columns[0])
    values = features[shown.index.to_numpy(), :SHOWN_FEATURES]
    for name, column in zip(names, values.T):
        name = f"{name} (feature)" if name in fields else name  # a feature called "rank" stays apart from the rank
        fields[name] = [f"{value:.4g}" for value in column]
    more = features.shape[1] - SHOWN_FEATURES
    note = f" The first {SHOWN_FEATURES} of {features.shape[1]} features are shown." if more > 0 else ""
    return _markdown(fields, caption=caption, issues=issues, note=note)


def write_markdown(sheet: str, *, path: PathLike) -> None:
    """A Markdown sheet (:func:`text_sheet`, :func:`table_sheet`) written atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(sheet)


def _shown(issues: pd.DataFrame, *, top: int, count: int, what: str, subset: np.ndarray | None = None) -> pd.DataFrame:
    """The first ``top`` rows of ``issues`` in rank order (of ``subset`` where given), indexed by their positions in
    the data, once ``top``, ``subset`` and ``count`` (images, texts or feature rows given) are checked."""
    if isinstance(top, bool) or not isinstance(top, int | np.integer) or top < 1:
        raise ValueError(
            f"a review sheet shows N >= 1 samples; got N = {top!r}. Fix: pass a whole number of 1 or "
            "more (enkcvs find-issues: --review-top; the workflow: report.review_top)"
        )
    if count != len(issues):
        raise ValueError(
            f"{count} {what} for {len(issues)} labelled samples. Fix: give one per labelled sample, in the labels' "
            "order"
        )
    issues = issues.reset_index(drop=True)  # row i is sample i
    if subset is not None:
        subset = np.asarray(subset)
        if subset.dtype != bool or subset.shape != (len(issues),):
            raise ValueError(
                f"a review sheet's subset is a (N,) bool mask over the {len(issues)} ranked samples; got "
                f"{subset.dtype} {subset.shape}"
            )
        issues = issues[subset]
    return in_rank_order(issues).head(int(top))


def _images(images, *, samples: np.ndarray, layout: str | None, root: PathLike) -> list[np.ndarray]:
    """The display images (:func:`display_image`) of ``samples`` from an image array or a list of paths."""
    if isinstance(images, np.ndarray) and images.dtype.kind in "biuf":
        layout = layout or image_layout(images.shape)
        return [display_image(images[sample], channels_first=layout == "NCHW") for sample in samples]
    paths = [Path(root, str(path)) for path in images]  # an absolute path stays itself
    missing = [row for row, path in enumerate(paths) if not os.path.isfile(path)]
    if missing:
        named = "; ".join(f"row {row + 1}: {paths[row]}" for row in missing[:SHOWN_ROWS])
        raise FileNotFoundError(
            f"{len(missing)} of {len(paths)} image files do not exist ({named}"
            f"{'; ...' if len(missing) > SHOWN_ROWS else ''}; rows numbered from 1, the first after the header). "
            "Fix: correct the paths (relative ones are read from the labels file's folder)"
        )
    return [display_image(read_image(paths[sample], row=int(sample) + 1)) for sample in samples]


def _fields(shown: pd.DataFrame, *, named_by: str) -> pd.DataFrame:
    """The fields every sheet gives a sample, as text."""
    return pd.DataFrame(
        {
            "rank": shown["rank"].astype(str).to_numpy(),
            named_by: shown[named_by].astype(str).to_numpy(),
            "given": shown["given_label"].astype(str).to_numpy(),
            "suggested": shown["predicted_label"].astype(str).to_numpy(),
            "votes": shown["votes"].astype(str).to_numpy(),
            "label score": [f"{score:.3f}" for score in shown["label_score"]],
            "review list": np.where(shown["is_label_issue"], "yes", "no"),
            "kept": np.where(shown["kept"], "yes", "no"),
        }
    )


def _markdown(fields: pd.DataFrame, *, caption: str, issues: pd.DataFrame, note: str = "") -> str:
    """``caption`` as the heading, the legend with both sets' sizes, and ``fields`` as a table (cells escaped)."""
    cells = fields.rename(columns=_cell).map(_cell)
    intro = f"{_top_of(len(fields), len(issues))}{note} {_set_sizes(issues)} {LEGEND}."
    features = list(fields.columns)[list(fields.columns).index("kept") + 1 :]
    align = ["right" if column in ("rank", "votes", "label score", *features) else "left" for column in fields]
    table = cells.to_markdown(index=False, disable_numparse=True, colalign=align)  # ids such as 007 stay text
    return f"# {caption}\n\n{textwrap.fill(intro, width=120)}\n\n{table}\n"


def _set_sizes(issues: pd.DataFrame) -> str:
    """How many of all the samples are in the review list, and how many are kept."""
    listed, kept = int(issues["is_label_issue"].sum()), int(issues["kept"].sum())
    return f"Of all {len(issues):,}: {listed:,} in the review list, {kept:,} kept."


def _top_of(shown: int, total: int | str) -> str:
    return f"Top {shown} of {total} samples, most likely mislabelled first."


def _cell(value: str) -> str:
    """``value`` safe inside a Markdown table cell: on one line, backslashes and pipes escaped."""
    return _one_line(str(value)).replace("\\", "\\\\").replace("|", "\\|")


def _shortened(text: str, *, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    text = _one_line(text)
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _one_line(text: str) -> str:
    """``text`` stripped, each line break (and the blanks around it) shown as ↵."""
    return re.sub(r"\s*(\r\n|\r|\n)\s*", " ↵ ", text.strip())


def _tile_title(row: dict, *, named_by: str) -> str:
    """An image tile's title: rank and name (a long one keeps its end), the given and the suggested class (each on
    at most :data:`NAME_LINES` lines), votes and label score."""
    head = f"#{row['rank']}  {named_by} "
    name = str(row[named_by])
    room = max(LINE_CHARS - len(head), 12)
    lines = [head + (name if len(name) <= room else "…" + name[len(name) - room + 1 :])]
    lines += [
        _fitted(f"given: {row['given_label']}", lines=NAME_LINES),
        _fitted(f"suggested: {row['predicted_label']}", lines=NAME_LINES),
    ]
    lines.append(f"votes {row['votes']} · score {row['label_score']:.2f}")
    return "\n".join(lines)


def _fitted(text: str, *, lines: int) -> str:
    """``text`` wrapped to the tile's width on at most ``lines`` lines, the rest cut with an ellipsis."""
    wrapped = textwrap.wrap(text, width=LINE_CHARS, break_long_words=True, subsequent_indent="  ") or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: LINE_CHARS - 1].rstrip() + "…"
    return "\n".join(wrapped)
