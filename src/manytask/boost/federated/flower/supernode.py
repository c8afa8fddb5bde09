"""One client of a local federation: a SuperNode and its long-running ClientApp process.

Lives here: :func:`main`, the two processes :mod:`.runner` starts per client through this
script. Flower's own mechanism keeps the ClientApp alive between messages: a SuperNode
started with ``--isolation process`` starts no ClientApp; one ``flwr-clientapp
--clientappio-api-address ADDRESS`` process (no ``--token``, no ``--run-once``) asks it for
work, loads the ClientApp once, answers every message of the run and asks again (Flower 1.20,
``flwr.supernode.runtime.run_clientapp``). ``main("supernode", ...)`` starts that process as
its child (``--parent-pid``: it exits when the SuperNode dies), then becomes
``flower-supernode``; ``main("clientapp", ...)`` imports the ClientApp's modules first (the
app's loader then finds them) and freezes them (``gc.freeze``: ``flwr-clientapp`` runs a full
``gc.collect()`` after every message), then becomes ``flwr-clientapp``.

Both poll faster than Flower does: Flower's pauses (an idle SuperNode asks the SuperLink for
work every 3 s and checks for its ClientApp's reply every 0.5 s; an idle ClientApp asks its
SuperNode every 1 s) suit training rounds of minutes. Here a pause starts at
:data:`SHORTEST` after a message and doubles up to :data:`LONGEST` while idle; object pulls
retry sooner (:func:`shorter_pull_backoff`); the SuperNode's heartbeat declares
:data:`HEARTBEAT_INTERVAL`, so a SuperNode that dies is reported by the SuperLink (Flower's
"node unavailable" error reply) within seconds. Nothing else changes; real deployments run
``flower-supernode --isolation process`` and ``flwr-clientapp`` themselves. Run as a script:
importing this module imports nothing heavy.
"""

import gc
import os
import subprocess
import sys
import time
import types
from pathlib import Path

SHORTEST = 0.002  # seconds: the first pause after a message
LONGEST = 0.2  # seconds: the longest pause while idle (Flower: 3 s and 1 s)
REPLY_POLL = 0.005  # seconds between checks for the ClientApp's reply (Flower: 0.5)
# The SuperNode's heartbeat: the SuperLink answers a message to a node silent for 2 intervals
# with Flower's "node unavailable" error (Flower: 30 s, so a lost node is seen after a minute)
HEARTBEAT_INTERVAL = 5.0  # seconds (Flower sends one every (5 − 2) × 0.7..0.9 s)
HEARTBEAT_CALL_TIMEOUT = 2.0  # seconds (Flower: 5)


class Pauses:
    """Pauses that start at ``shortest`` after activity and double up to ``longest``."""

    def __init__(self, shortest=SHORTEST, longest=LONGEST):
        self.shortest, self.longest, self.next = shortest, longest, shortest

    def active(self) -> None:
        self.next = self.shortest

    def idle(self) -> None:
        pause, self.next = self.next, min(2 * self.next, self.longest)
        time.sleep(pause)


def shorter_pull_backoff(seconds=SHORTEST) -> None:
    """Flower's object pulls wait ``seconds`` (doubling up to :data:`LONGEST`) before asking
    again for an object not yet there, instead of 1 s doubling up to 10 s.

    A message becomes visible before its arrays (they follow in separate requests), so a fast
    reader often asks once too early; Flower's pause then dominates a short message.
    """
    from flwr.common import inflatable_utils

    for function in (inflatable_utils.pull_objects,
                     inflatable_utils.pull_and_inflate_object_from_tree):  # fmt: skip
        function.__kwdefaults__.update(initial_backoff=seconds, backoff_cap=LONGEST)


def _shorter_heartbeat() -> None:
    """This SuperNode declares :data:`HEARTBEAT_INTERVAL` and keeps to it."""
    import flwr.client.grpc_rere_client.connection as connection
    import flwr.common.heartbeat as heartbeat

    for module in (connection, heartbeat):
        module.HEARTBEAT_DEFAULT_INTERVAL = HEARTBEAT_INTERVAL
        module.HEARTBEAT_CALL_TIMEOUT = HEARTBEAT_CALL_TIMEOUT


def _time_with(sleep) -> types.ModuleType:
    """A stand-in for the ``time`` module whose ``sleep`` is ``sleep``."""
    patched = types.ModuleType("time")
    patched.__dict__.update(time.__dict__)
    patched.sleep = sleep
    return patched


def _after(function, then):
    def wrapped(*args, **kwargs):
        result = function(*args, **kwargs)
        then(result)
        return result

    return wrapped


def supernode(argv) -> None:
    """``flower-supernode --isolation process argv`` with its ClientApp process as a child."""
    import flwr.supernode.start_client_internal as internal
    from flwr.supernode.cli.flower_supernode import flower_supernode

    address = argv[argv.index("--clientappio-api-address") + 1]
    subprocess.Popen([sys.executable, __file__, "clientapp", "--insecure",
                      "--clientappio-api-address", address,
                      "--parent-pid", str(os.getpid())])  # fmt: skip
    shorter_pull_backoff()
    _shorter_heartbeat()
    pauses = Pauses()

    def sleep(seconds):  # 3 s: no message from the SuperLink; 0.5 s: waiting for a reply
        if seconds >= 1.0:
            pauses.idle()
        else:
            time.sleep(min(seconds, REPLY_POLL))

    internal.time = _time_with(sleep)  # only this module's pauses
    internal._pull_and_store_message = _after(
        internal._pull_and_store_message,
        lambda run_id: pauses.active() if run_id is not None else None,
    )
    sys.argv = ["flower-supernode", "--isolation", "process", *argv]
    flower_supernode()


def _preload_clientapp() -> None:
    """The ClientApp's modules as the app's loader imports them (``runner.CLIENT_SOURCE``)."""
    from importlib import import_module

    federated = Path(__file__).resolve().parent.parent
    for name, path in (("_fedmultiboost", federated), ("_fedmultiboost.flower",
                                                       federated / "flower")):  # fmt: skip
        package = sys.modules.setdefault(name, types.ModuleType(name))
        package.__path__ = [str(path)]
    import_module("_fedmultiboost.flower.clientapp")


def _memo(function, key):
    """``function`` computed once per ``key(*args, **kwargs)``."""
    results = {}

    def memoised(*args, **kwargs):
        k = key(*args, **kwargs)
        if k not in results:
            results[k] = function(*args, **kwargs)
        return results[k]

    return memoised


def _install_and_load_once(runtime) -> None:
    """The long-running ClientApp installs a run's FAB and loads its ClientApp once, not on
    every message (Flower 1.20 unzips and checks the FAB and re-reads the app's config on
    each). Both are keyed by the FAB's hash, so a new app is still installed and loaded."""
    import hashlib

    runtime.install_from_fab = _memo(
        runtime.install_from_fab,
        lambda content, flwr_dir=None, skip_prompt=False: (
            hashlib.sha256(content).hexdigest(),
            str(flwr_dir),
        ),
    )
    make_loader, loaded = runtime.get_load_client_app_fn, {}

    def get_load_client_app_fn(*args, **kwargs):  # called on every message
        load = make_loader(*args, **kwargs)

        def load_once(*key):  # (fab id, version, hash)
            if key not in loaded:
                loaded[key] = load(*key)
                gc.freeze()  # the app's objects too (see clientapp)
            return loaded[key]

        return load_once

    runtime.get_load_client_app_fn = get_load_client_app_fn


def clientapp(argv) -> None:
    """``flwr-clientapp argv`` (long-running: no token) with the ClientApp preloaded."""
    import flwr.supernode.runtime.run_clientapp as runtime
    from flwr.supernode.cli.flwr_clientapp import flwr_clientapp

    _preload_clientapp()
    shorter_pull_backoff()
    _install_and_load_once(runtime)
    # flwr-clientapp runs gc.collect() after every message; the modules loaded so far live as
    # long as the process, so they are moved out of the collector's reach
    gc.freeze()
    pauses = Pauses()
    runtime.time = _time_with(lambda seconds: pauses.idle() if seconds >= 1.0 else
                              time.sleep(seconds))  # fmt: skip
    runtime.get_token = _after(runtime.get_token, lambda token: pauses.active())
    sys.argv = ["flwr-clientapp", *argv]
    flwr_clientapp()


def main(argv=None) -> None:
    """``supernode ARGS`` or ``clientapp ARGS`` (default: this process's arguments)."""
    from flwr.common.logger import FLOWER_LOGGER

    role, *rest = sys.argv[1:] if argv is None else argv
    for handler in FLOWER_LOGGER.handlers:  # the logs say when each message came and went
        handler.timestamps = True
    {"supernode": supernode, "clientapp": clientapp}[role](rest)


if __name__ == "__main__":
    main()
