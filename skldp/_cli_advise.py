"""``skldp advise``: the advisor's table, grouped by the guarantee each mechanism gives."""

import re
import textwrap

from skldp._cli_common import CLIError, _wrap, warn_large_epsilon

#: The assumption of a registry entry that needs nothing beyond its guarantee.
_NO_ASSUMPTION = re.compile(r"^none: exact variance\s*")


def _indices_or_count(text, name):
    """``--sensitive 10`` (a count: the first 10) or ``--sensitive 0,4,9`` (indices)."""
    parts = [t.strip() for t in text.split(",")]
    if not all(re.fullmatch(r"\d+", t) for t in parts):
        raise CLIError(
            f"--{name} must be a count such as 10 or comma-separated category indices such as "
            f"0,4,9; got {text!r}"
        )
    values = [int(t) for t in parts]
    return values[0] if len(values) == 1 and "," not in text else values


def _notes(assumption, base, said):
    """What a row assumes beyond its group's heading: the entry's own words (without "none:
    exact variance"; not again when the heading ``said`` them) and what the advisor added
    (the normal approximation, sparse recovery)."""
    extra = assumption[len(base) :].lstrip("; ") if assumption.startswith(base) else assumption
    own = "" if said else _NO_ASSUMPTION.sub("", base).strip("() ")
    extra = extra.replace("l1 and projected_tv need", "the error needs")
    return "; ".join(part for part in (own, extra) if part)


def _groups(table):
    """Rows by guarantee: epsilon-LDP first, then the others in the order of their best row."""
    from skldp._registry import get_mechanism

    groups = {}
    for rank, row in zip(table.index, table.itertuples(index=False), strict=True):
        entry = get_mechanism(row.mechanism)
        groups.setdefault(row.guarantee, []).append((rank, row, entry))
    order = sorted(groups, key=lambda g: (g != "epsilon-LDP", groups[g][0][0]))
    return [(g, groups[g]) for g in order]


def _group_heading(guarantee, rows):
    """The guarantee in words, once (the entries' text when they agree) and what it needs:
    (heading, whether the heading says every row's assumption)."""
    texts = {entry.guarantee for _, _, entry in rows}
    heading = texts.pop() if len(texts) == 1 else guarantee
    needs = {entry.assumption for _, _, entry in rows}
    if len(needs) == 1 and not _NO_ASSUMPTION.match(next(iter(needs))):
        return f"{heading}. Assumes: {needs.pop()}", True
    return heading, False


def _cmd_advise(args):
    from skldp._advisor import recommend_mechanism

    sensitive = None if args.sensitive is None else _indices_or_count(args.sensitive, "sensitive")
    warn_large_epsilon("skldp advise", args.epsilon)
    table = recommend_mechanism(
        args.n_categories,
        args.n_reports,
        args.epsilon,
        sensitive=sensitive,
        blocks=args.blocks,
        sparsity=args.sparsity,
        max_bits=args.max_bits,
    )
    print(
        f"k = {args.n_categories}, n = {args.n_reports}, epsilon = {args.epsilon:g}, people drawn "
        f"from p {table.attrs['reference']}."
    )
    print(
        _wrap(
            "error: the expected total variation distance between the estimated distribution "
            "(the unbiased estimate projected onto the simplex) and the true one, from 0 "
            "(exact) to 1 (nothing learned). l2 (unbiased): the root mean squared l2 error of "
            "the unbiased estimate, exact; the rank, within each group, follows it. Rows are "
            "grouped by the privacy they give; a group weaker than epsilon-LDP says what it "
            "assumes.",
            99,
            "",
        )
        + "\n"
    )
    header = ["rank", "mechanism", "error", "l2 (unbiased)", "bits", "parameters"]
    cells, notes, heads = [], [], []
    for guarantee, rows in _groups(table):
        heading, said = _group_heading(guarantee, rows)
        heads.append((len(cells), heading))
        for rank, (_, row, entry) in enumerate(rows, 1):
            cells.append(
                [
                    str(rank),
                    row.mechanism,
                    f"{row.projected_tv:.4g}",
                    f"{row.l2:.4g}",
                    f"{row.bits_per_report:g}",
                    row.parameters or "-",
                ]
            )
            notes.append(_notes(row.assumption, entry.assumption, said))
    widths = [max(len(r[j]) for r in [header, *cells]) + 2 for j in range(len(header))]
    indent = "  "
    lines = []
    starts = dict(heads)
    for i, (cell, note) in enumerate(zip(cells, notes, strict=True)):
        if i in starts:
            if lines:
                lines.append("")
            lines.append(_wrap(starts[i], 99, ""))
            lines.append(
                indent + "".join(f"{c:<{w}}" for c, w in zip(header, widths, strict=True)).rstrip()
            )
        lines.append(indent + "".join(f"{c:<{w}}" for c, w in zip(cell, widths, strict=True)))
        lines[-1] = lines[-1].rstrip()
        if note:
            lines.append(_wrap(note, 99, indent + " " * widths[0]))
    if not cells:
        lines.append("(no mechanism fits; see below)")
    not_ranked = table.attrs["not_ranked"]
    if not_ranked:
        lines.append("\nnot ranked:")
        name_w = max(len(name) for name in not_ranked) + 4
        for name, reason in not_ranked.items():
            text = textwrap.fill(
                reason,
                width=99,
                initial_indent=f"  {name:<{name_w - 2}}",
                subsequent_indent=" " * name_w,
            )
            lines.append(text)
    print("\n".join(lines))
    return 0
