"""The one way manytask draws: a matplotlib ``Figure`` on the Agg canvas.

No pyplot (no global state, no GUI backend): safe headless, in tests and in threads.
"""

from __future__ import annotations

__all__ = ["agg_figure"]


def agg_figure(width: float, height: float):
    """A constrained-layout ``Figure`` of ``width`` × ``height`` inches on an Agg canvas.

    Parameters
    ----------
    width, height : float
        Size in inches.

    Returns
    -------
    matplotlib.figure.Figure
        An empty figure, attached to its own Agg canvas (``figure.savefig`` works).

    Examples
    --------
    >>> figure = agg_figure(3.0, 2.0)
    >>> figure.get_size_inches().tolist()
    [3.0, 2.0]
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure
