"""FEDMULTIBOOST as a Flower App on this machine, on either of Flower's runtimes.

Lives here: :func:`run_local_federation` (the clients of :func:`~..simulation.simulate` on
Flower's Deployment Runtime: each a ``flower-supernode`` process, a ``flower-superlink`` on
loopback, the app submitted with ``flwr run``; or on its Simulation Runtime: a
``flower-superlink --simulation`` and ``flwr run``, which needs Flower's ``simulation`` extra,
Ray), the files the apps read (:func:`save_shard`, :func:`write_app`) and
:func:`read_result`. Not here: the apps themselves (:mod:`.apps`). Every process is Flower's
own command, started as its documentation says; nothing of Flower is patched.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from ...._validation import check_positive_int, check_retries, check_timeout
from ..client import ModelState
from ..domain import as_domain_classifier
from ..domain_client import SoftmaxDomainModel
from ..driver import FederatedRun
from ..protocol import state_from_payload
from ..simulation import as_estimator, prepare_clients
from .apps import FLWR_MISSING, RUN_CONFIG

__all__ = [
    "federation_estimator",
    "prepare_federation",
    "read_result",
    "run_local_federation",
    "save_shard",
    "write_app",
    "write_inputs",
]

APP_NAME = "fedmultiboost"
CONNECTION = "manytask-local"
STARTUP_SECONDS = 300.0  # for the SuperLink's port, the SuperNodes, their first replies
SUPEREXEC_POLL = 0.05  # seconds between a SuperExec's requests for work (Flower's default: 1)


def _require_flower() -> Path:
    """The directory of the Flower executables (next to this Python's)."""
    try:
        import flwr  # noqa: F401
    except ImportError as error:
        raise ImportError(FLWR_MISSING) from error
    bin_dir = Path(sys.executable).parent
    for script in ("flower-superlink", "flower-supernode", "flwr"):
        if not (bin_dir / script).exists() and shutil.which(script) is None:
            raise ImportError(f"{script} not found next to {sys.executable}; {FLWR_MISSING}")
    return bin_dir


def save_shard(path, shard) -> None:
    """Write a client's :class:`~..client.ClientShard` for the ClientApp (``shard`` node config).

    Parameters
    ----------
    path : str or path-like
        The .npz file.
    shard : ClientShard
        The client's data; ``domain_probabilities`` None when Q is trained federated.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from manytask.boost.federated import ClientShard
    >>> from manytask.boost.federated.flower.clientapp import load_shard
    >>> with tempfile.TemporaryDirectory() as root:
    ...     path = pathlib.Path(root) / "client-0.npz"
    ...     save_shard(path, ClientShard(np.zeros((2, 1)), np.ones(2), 1, np.ones((2, 2))))
    ...     shard = load_shard(path)
    >>> shard.domain, shard.domain_probabilities.shape
    (1, (2, 2))
    """
    arrays = {"X": shard.X, "y": shard.y, "domain": np.array(shard.domain)}
    if shard.domain_probabilities is not None:  # None: Q is trained federated
        arrays["domain_probabilities"] = shard.domain_probabilities
    np.savez(path, **arrays)


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))  # a TOML basic string is a JSON string


# The ClientApp component of the app on the Deployment Runtime. Flower starts a ClientApp
# process per message, which imports it; manytask's top-level package (SciPy, scikit-learn and
# all of manytask: 12 s against flwr's 3 s at load 16 on 2 cores) would make every message that
# much slower, so this loads the client side of the protocol (client.py, domain_client.py,
# protocol.py, clientapp.py: NumPy and flwr only) as a stand-alone package, or manytask as
# usual if that fails. The Simulation Runtime sends the ClientApp to its Ray workers by
# reference, which the stand-alone package cannot be: there (a worker imports once for the
# whole run) the component is manytask's module itself.
CLIENT_MODULE = "fedmultiboost_client"
CLIENT_SOURCE = '''"""FEDMULTIBOOST's ClientApp (manytask), without manytask's top-level package."""

import importlib
import importlib.util
import sys
import types
from pathlib import Path


def _client_app():
    spec = importlib.util.find_spec("manytask")
    if spec is None or spec.origin is None:
        raise ImportError("manytask is not installed on this SuperNode: pip install manytask[fed]")
    federated = Path(spec.origin).parent / "boost" / "federated"
    try:
        for name, path in (("_fedmultiboost", federated), ("_fedmultiboost.flower",
                                                           federated / "flower")):
            package = sys.modules.setdefault(name, types.ModuleType(name))
            package.__path__ = [str(path)]
        return importlib.import_module("_fedmultiboost.flower.clientapp").client_app
    except ImportError:
        from manytask.boost.federated.flower.clientapp import client_app

        return client_app


client_app = _client_app()
'''


def write_app(directory, runtime="deployment") -> Path:
    """The Flower App project of FEDMULTIBOOST, for ``flwr run``: ``pyproject.toml`` with
    ``[tool.flwr.app]`` (ServerApp :mod:`.apps`, ClientApp :mod:`.clientapp`, on the
    ``"deployment"`` runtime through a small loader module that spares each message's ClientApp
    process the import of all of manytask; the run config :data:`~.apps.RUN_CONFIG` with its
    defaults) and that loader.

    Parameters
    ----------
    directory : str or path-like
        Where the project goes (created if missing).
    runtime : {"deployment", "simulation"}, default="deployment"
        The runtime; on "simulation" the ClientApp is :mod:`.clientapp` itself.

    Returns
    -------
    Path
        ``directory``.

    Examples
    --------
    >>> import tempfile
    >>> app = write_app(tempfile.mkdtemp())
    >>> sorted(path.name for path in app.iterdir())
    ['fedmultiboost_client.py', 'pyproject.toml']
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{CLIENT_MODULE}.py").write_text(CLIENT_SOURCE, encoding="utf-8")
    component = (f"{CLIENT_MODULE}:client_app" if runtime == "deployment" else
                 "manytask.boost.federated.flower.clientapp:client_app")  # fmt: skip
    config = "\n".join(f"{key} = {_toml_value(value)}" for key, value in RUN_CONFIG.items())
    (directory / "pyproject.toml").write_text(
        f"""[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "{APP_NAME}"
version = "1.0.0"
description = "FEDMULTIBOOST (manytask) on Flower"
license = "BSD-3-Clause"
dependencies = ["manytask[fed]"]

[tool.flwr.app]
publisher = "manytask"

[tool.flwr.app.components]
serverapp = "manytask.boost.federated.flower.apps:server_app"
clientapp = "{component}"

[tool.flwr.app.config]
{config}
""",
        encoding="utf-8",
    )
    return directory


def write_connection(flwr_home, address) -> Path:
    """The Flower configuration (``FLWR_HOME/config.toml``) of the ``flwr`` CLI: one SuperLink
    connection, :data:`CONNECTION`, to ``address`` without TLS (loopback only).

    Parameters
    ----------
    flwr_home : str or path-like
        ``FLWR_HOME``.
    address : str
        The SuperLink's control API, host:port.

    Returns
    -------
    Path
        The configuration file.

    Examples
    --------
    >>> import tempfile
    >>> print(write_connection(tempfile.mkdtemp(), "127.0.0.1:8000").read_text())
    [superlink]
    default = "manytask-local"
    <BLANKLINE>
    [superlink.manytask-local]
    address = "127.0.0.1:8000"
    insecure = true
    <BLANKLINE>
    """
    path = Path(flwr_home) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[superlink]\ndefault = "{CONNECTION}"\n\n[superlink.{CONNECTION}]\n'
                    f'address = "{address}"\ninsecure = true\n', encoding="utf-8")  # fmt: skip
    return path


def read_result(path):
    """(state, run dict) from the ServerApp's result file; raises if the server failed.

    Parameters
    ----------
    path : str or path-like
        The result file (:func:`~.apps.write_result`).

    Returns
    -------
    state : ModelState
        The fitted terms.
    run : dict
        The run's record; each round's ``losses``, ``active`` and ``direction`` as arrays and
        a tuple again.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from manytask.boost.federated.flower.apps import write_result
    >>> with tempfile.TemporaryDirectory() as root:
    ...     path = pathlib.Path(root) / "result.npz"
    ...     write_result(path, ModelState(), {"history": [{"direction": [0, 1, 0.5, -1]}]})
    ...     state, run = read_result(path)
    >>> state.size, run["history"][0]["direction"]
    (0, (0, 1, 0.5, -1))
    """
    with np.load(path, allow_pickle=False) as data:
        run = json.loads(str(data["run"]))
        if run.get("error"):
            raise RuntimeError(f"the Flower ServerApp failed:\n{run['error']}")
        state = state_from_payload({key: data[key] for key in data.files if key != "run"})
    for record in run["history"]:
        for key in ("losses", "active"):
            if record.get(key) is not None:
                record[key] = np.asarray(record[key], dtype=float if key == "losses" else int)
        if record.get("direction") is not None:
            k, j, threshold, polarity = record["direction"]
            if np.ndim(j) == 0:
                record["direction"] = (int(k), int(j), float(threshold), int(polarity))
            else:  # a tree
                record["direction"] = (int(k), np.asarray(j, dtype=int),
                                       np.asarray(threshold, dtype=float),
                                       np.asarray(polarity, dtype=float))  # fmt: skip
    return state, run


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port, process, log, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"flower-superlink exited ({process.returncode}):\n{_tail(log)}")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"flower-superlink did not listen on port {port} in {seconds} s")


def _tail(path, lines=40) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _signal_group(process, signum) -> None:
    try:
        os.killpg(process.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(processes, grace=5.0) -> None:
    """SIGTERM the process groups of processes we started (each and the Flower processes it
    spawned), all at once; SIGKILL what is left after ``grace`` seconds."""
    for process in processes:
        if process.poll() is None:
            _signal_group(process, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for process in processes:
        try:
            process.wait(max(deadline - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            pass
    for process in processes:  # children (superexec, app processes) may outlive their parent
        _signal_group(process, signal.SIGKILL)
        process.wait()


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the process that started it dies (Linux
    ``PR_SET_PDEATHSIG``), so a killed caller leaves no SuperLink or SuperNode behind."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


class _Processes:
    """Started processes, each in its own session, stopped (last first) on exit."""

    def __init__(self, env, logs):
        self.env, self.logs, self.started = env, logs, []

    def start(self, name, command, env=None):
        log = self.logs / f"{name}.log"
        with open(log, "wb") as output:
            process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, env=env or self.env,
                                       start_new_session=True,
                                       preexec_fn=_die_with_parent)  # fmt: skip
        self.started.append(process)
        return process, log

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        _stop(self.started[::-1])
        return False


def run_local_federation(X, y, domains, clients_per_domain, r=None, s=None, n_rounds=100,
                         random_state=None, *, thresholds=None, n_quantiles=16,
                         domain_classifier="federated", line_search_batch=15, retries=0,
                         timeout=30.0, mu=None, secure=False, runtime="deployment",
                         workdir=None, max_depth=1):  # fmt: skip
    """FEDMULTIBOOST (Figure 2) as a Flower App on this machine, on one of Flower's runtimes.

    The same clients as :func:`~manytask.boost.federated.simulate` (same split, same Q, same
    random choices for a given ``random_state``; the default federated Q is trained by the
    ServerApp over Flower, the shards holding no Q), the app of :func:`write_app` submitted
    with ``flwr run`` to a ``flower-superlink`` on 127.0.0.1. ``runtime="deployment"``: one
    ``flower-supernode`` process per client (node config ``shard``, ``client-id``);
    ``"simulation"``: the SuperLink started with ``--simulation`` runs the ClientApps as
    virtual SuperNodes (node config ``partition-id``; needs ``pip install flwr[simulation]``,
    Ray). A client that fails or has not answered a request batch within ``timeout`` seconds
    is dropped from its round, which restarts without it. Every process is stopped on return,
    on error and on KeyboardInterrupt.

    Parameters
    ----------
    X, y, domains, clients_per_domain, r, s, n_rounds, random_state, thresholds, n_quantiles, \
domain_classifier, line_search_batch, retries : as in :func:`~manytask.boost.federated.simulate`
    timeout : None or float > 0
        Seconds the server waits for the replies of one request batch (also the TTL of its
        messages); None: wait for every reply.
    mu : None or float > 0
        As in :func:`~manytask.boost.federated.simulate`.
    secure : bool
        Pairwise-masked sums (:mod:`.secure`): the server sees each source's sums, no single
        client's values (needs ``retries=0``).
    runtime : {"deployment", "simulation"}
        Flower's Deployment Runtime (SuperNodes) or its Simulation Runtime.
    workdir : None or path
        Where the shards, the app, ``FLWR_HOME`` and the processes' logs go (kept); None: a
        temporary directory, removed afterwards.
    max_depth : int >= 1
        As in :func:`~manytask.boost.federated.simulate`. With ``secure`` the server grows
        each active source's tree from the masked sums of its clients' histograms
        (``simulate``'s ``histogram_trees=True``; a proposed tree is one client's, not a
        sum), level by level: one more request batch per level below the root, at most
        2(2^d − 1)·d·B numbers from a client per round (B bins per feature; p times that
        with ``mu``, a tree per domain).

    Returns
    -------
    MultiBoostClassifier
        As :func:`~manytask.boost.federated.simulate`'s; ``federated_run_.history`` holds the
        per-round ``seconds`` measured by the ServerApp (Flower's round trips included) and
        ``batch_seconds`` (each request batch, push to last reply) and ``batch_started``
        (their starts, ``time.time()``); ``federated_run_.messages`` is empty (not recorded).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = run_local_federation(X, y, np.repeat([0, 1, 2], 40), 1,
    ...                            n_rounds=1)  # doctest: +SKIP
    """
    if runtime not in ("deployment", "simulation"):
        raise ValueError(f"runtime must be 'deployment' or 'simulation', got {runtime!r}")
    bin_dir = _require_flower()
    federation = prepare_federation(
        X, y, domains, clients_per_domain, r, s, n_rounds, random_state,
        thresholds=thresholds, n_quantiles=n_quantiles, domain_classifier=domain_classifier,
        line_search_batch=line_search_batch, retries=retries, timeout=timeout, mu=mu,
        secure=secure, max_depth=max_depth,
    )  # fmt: skip
    if runtime == "simulation":
        _require_ray()
    with ExitStack() as stack:
        if workdir is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="manytask-fl-")))
        else:
            root = Path(workdir)
            root.mkdir(parents=True, exist_ok=True)
        shard_paths = write_inputs(root, federation)
        state, run = _deploy(bin_dir, root, shard_paths, federation["run_config"], runtime)
    return federation_estimator(federation, state, run)


def _require_ray() -> None:
    try:
        import ray  # noqa: F401
    except ImportError as error:
        raise ImportError(
            "Flower's Simulation Runtime needs Ray: pip install 'flwr[simulation]'"
        ) from error


def prepare_federation(X, y, domains, clients_per_domain, r=None, s=None, n_rounds=100,
                       random_state=None, *, thresholds=None, n_quantiles=16,
                       domain_classifier="federated", line_search_batch=15, retries=0,
                       timeout=None, mu=None, secure=False, max_depth=1) -> dict:  # fmt: skip
    """What :func:`~manytask.boost.federated.simulate` does before its loop, for Flower.

    The transport's own checks (``retries``, ``timeout``, ``secure``), then the set-up every
    runner shares (:func:`~..simulation.prepare_clients`: the checks, a central Q or none
    when the ServerApp trains it, the clients' shards). Returns a dict: ``shards``,
    ``client_points``, ``q``, ``classes``, ``domain_labels``, ``n_features``, ``thresholds``,
    ``mu`` and the ServerApp's ``run_config`` (whose ``rng-state`` continues simulate's
    generator where the client split left it).

    Parameters
    ----------
    X, y, domains, clients_per_domain, r, s, n_rounds, random_state, thresholds, n_quantiles, \
domain_classifier, line_search_batch, retries, timeout, mu, secure, max_depth
        As in :func:`run_local_federation`.

    Returns
    -------
    dict
        The federation's inputs, keyed as above.

    Examples
    --------
    >>> X = np.arange(8.0).reshape(4, 2)
    >>> federation = prepare_federation(X, [0, 1, 0, 1], [0, 0, 1, 1], 1, n_rounds=5)
    >>> len(federation["shards"]), federation["run_config"]["n-rounds"], federation["q"]
    (2, 5, None)
    """
    check_retries(retries)
    check_timeout(timeout)
    if not isinstance(secure, (bool, np.bool_)):
        raise ValueError(f"secure must be True or False, got {secure!r}")
    if secure and retries:
        raise ValueError(f"secure sums need retries=0, got retries={retries!r}")
    check_positive_int(max_depth, "max_depth")
    clients = prepare_clients(
        X, y, domains, clients_per_domain, r, s, n_rounds, random_state,
        n_quantiles=n_quantiles, domain_classifier=domain_classifier,
        line_search_batch=line_search_batch, mu=mu, thresholds=thresholds,
    )  # fmt: skip
    run_config = {
        "domain-classifier": "federated" if clients["federated_q"] else "central",
        "n-clients": len(clients["shards"]), "n-domains": int(clients["domain_labels"].size),
        "n-rounds": int(n_rounds), "r": int(r or 0), "s": int(s or 0),
        "rng-state": json.dumps(clients["rng"].bit_generator.state),
        "n-quantiles": int(n_quantiles), "line-search-batch": int(line_search_batch),
        "retries": int(retries), "timeout": float(timeout or 0.0), "mu": float(mu or 0.0),
        "wait": STARTUP_SECONDS, "secure": bool(secure), "max-depth": int(max_depth),
    }  # fmt: skip
    return {**{key: clients[key] for key in ("shards", "client_points", "q", "classes",
                                             "domain_labels")},
            "n_features": clients["X"].shape[1], "thresholds": thresholds,
            "run_config": run_config, "mu": mu, "max_depth": int(max_depth)}  # fmt: skip


def write_inputs(root, federation) -> list[Path]:
    """The shards (one .npz per client) and the server's thresholds under ``root``; sets the
    ``thresholds`` and ``result`` paths of ``federation["run_config"]``; returns the shards.

    Parameters
    ----------
    root : str or path-like
        The directory.
    federation : dict
        :func:`prepare_federation`'s result; its ``run_config`` is updated.

    Returns
    -------
    list of Path
        The shards' files, client by client.

    Examples
    --------
    >>> import tempfile
    >>> X = np.arange(8.0).reshape(4, 2)
    >>> federation = prepare_federation(X, [0, 1, 0, 1], [0, 0, 1, 1], 1)
    >>> with tempfile.TemporaryDirectory() as root:
    ...     paths = write_inputs(root, federation)
    >>> [path.name for path in paths], Path(federation["run_config"]["result"]).name
    (['client-0.npz', 'client-1.npz'], 'result.npz')
    """
    root = Path(root)
    (root / "shards").mkdir(parents=True, exist_ok=True)
    run_config = federation["run_config"]
    if federation["thresholds"] is not None:
        arrays = {str(j): np.asarray(t, dtype=float)
                  for j, t in enumerate(federation["thresholds"])}  # fmt: skip
        np.savez(root / "thresholds.npz", **arrays)
        run_config["thresholds"] = str(root / "thresholds.npz")
    result = root / "result.npz"
    result.unlink(missing_ok=True)
    run_config["result"] = str(result)
    paths = []
    for client, shard in enumerate(federation["shards"]):
        paths.append(root / "shards" / f"client-{client}.npz")
        save_shard(paths[-1], shard)
    return paths


def federation_estimator(federation, state, run):
    """The fitted :class:`~manytask.boost.MultiBoostClassifier` from the server's result.

    Parameters
    ----------
    federation : dict
        :func:`prepare_federation`'s result.
    state : ModelState
        The fitted terms (:func:`read_result`).
    run : dict
        The run's record: ``setup``, ``history`` and, when the ServerApp trained Q,
        ``domain_model``.

    Returns
    -------
    MultiBoostClassifier
        The fitted estimator.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [0.0], [1.0]])
    >>> federation = prepare_federation(X, [0, 1, 0, 1], [0, 0, 1, 1], 1)
    >>> model = {"coef": [[0.0]], "intercept": [0.0], "clip": 1e-6, "n_clipped": 0}
    >>> run = {"setup": {}, "history": [{"direction": (0, 0, 0.5, 1), "step": 0.25}],
    ...        "domain_model": model}
    >>> state = ModelState().with_term(0, 0, 0.5, 1.0, 0.25)
    >>> federation_estimator(federation, state, run).predict(X).tolist()
    [0, 1, 0, 1]
    """
    federated_run = FederatedRun(setup=run["setup"], history=run["history"],
                                 client_points=federation["client_points"])  # fmt: skip
    q = federation["q"]
    if run.get("domain_model") is not None:  # the federated Q, trained by the ServerApp
        model = run["domain_model"]
        labels = federation["domain_labels"]
        q = as_domain_classifier(SoftmaxDomainModel(model["coef"], model["intercept"], labels),
                                 labels, model["clip"], model["n_clipped"])  # fmt: skip
    return as_estimator(
        state,
        q,
        federation["classes"],
        federation["domain_labels"],
        federation["n_features"],
        federated_run,
        mu=federation["mu"],
        max_depth=federation["max_depth"],
    )


def _deploy(bin_dir, root, shard_paths, run_config, runtime) -> tuple[ModelState, dict]:
    """SuperLink (``--simulation`` on the Simulation Runtime), SuperNodes (Deployment Runtime)
    and ``flwr run`` as local processes; (state, run) of the server."""
    logs = root / "logs"
    logs.mkdir(exist_ok=True)
    result = Path(run_config["result"])
    simulation = runtime == "simulation"
    if simulation:
        run_config = {**run_config, "shards": str(root / "shards")}
    overrides = root / "run-config.toml"
    overrides.write_text(
        "".join(f"{key} = {_toml_value(value)}\n" for key, value in run_config.items()),
        encoding="utf-8",
    )
    # SUPEREXEC_POLL: Flower's SuperExec (which starts the ServerApp and each ClientApp
    # process) asks for work every second by default; FLWR_SUPEREXEC_TASK_POLL_INTERVAL is
    # Flower's own setting of that pause
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "FLWR_TELEMETRY_ENABLED": "0", "PYTHONUNBUFFERED": "1",
           "FLWR_SUPEREXEC_TASK_POLL_INTERVAL": str(SUPEREXEC_POLL)}  # fmt: skip

    def home(name):
        path = root / "flwr-home" / name
        path.mkdir(parents=True, exist_ok=True)
        return {**env, "FLWR_HOME": str(path)}

    port = _free_port()
    app = write_app(root / "app", runtime)
    cli_env = home("cli")
    write_connection(cli_env["FLWR_HOME"], f"127.0.0.1:{port}")
    with _Processes(env, logs) as processes:
        superlink, superlink_log = processes.start("superlink", [
            str(bin_dir / "flower-superlink"), "--insecure", "--host", "127.0.0.1",
            "--port", str(port), "--disable-runtime-dependency-installation",
            *(["--simulation"] if simulation else []),
        ], home("superlink"))  # fmt: skip
        for client, path in enumerate([] if simulation else shard_paths):
            node_config = f"shard={_toml_value(str(path))} client-id={client}"
            processes.start(f"supernode-{client}", [  # they retry until the SuperLink listens
                str(bin_dir / "flower-supernode"), "--insecure",
                "--superlink", f"127.0.0.1:{port}", "--host", "127.0.0.1",
                "--port", str(_free_port()), "--node-config", node_config,
            ], home(f"supernode-{client}"))  # fmt: skip
        _wait_for_port(port, superlink, superlink_log, STARTUP_SECONDS)
        submit, submit_log = processes.start("flwr-run", [
            str(bin_dir / "flwr"), "run", str(app), CONNECTION, "--stream",
            "--run-config", str(overrides),
            *(["--federation-config", f"num-supernodes={len(shard_paths)}"] if simulation else []),
        ], cli_env)  # fmt: skip
        while submit.poll() is None and not result.exists():
            if superlink.poll() is not None:
                raise RuntimeError(f"flower-superlink exited:\n{_tail(superlink_log)}")
            time.sleep(0.1)
        if not result.exists():
            raise RuntimeError(
                f"flwr run ended ({submit.returncode}) without a result:\n{_tail(submit_log)}"
                f"\nSuperLink log:\n{_tail(superlink_log)}"
            )
        return read_result(result)
