"""A ``flwr-clientapp`` that forks from a preloaded process, for the local federations of
:mod:`.runner` (Linux).

Lives here: :func:`serve` (the fork server) and :func:`write_shim` (the ``flwr-clientapp``
executable put first on the SuperNodes' PATH). Flower 1.42's SuperExec starts one
``flwr-clientapp`` process per message (``subprocess.Popen``, not waited for), and that
process spends ~1.4 s of CPU importing Flower before it pulls its message; a FEDMULTIBOOST
round is ~20 requests. The shim hands its arguments and environment to :func:`serve` over a
Unix socket and exits; the server, which imported Flower and the ClientApp once, forks, and
the child runs Flower's own ``flwr_clientapp()`` entry point with them (same token, same
Runtime API, same FAB installation, same ClientApp). Nothing else changes; real deployments
use Flower's ``flwr-clientapp``. Run as a script: importing this module imports nothing heavy.
"""

import json
import os
import signal
import socket
import sys
from pathlib import Path

SHIM = """#!{python} -IS
# flwr-clientapp for a local FEDMULTIBOOST federation: forked by manytask's fork server, or
# Flower's own flwr-clientapp if that server does not answer.
import json, os, socket, sys
try:
    with socket.socket(socket.AF_UNIX) as server:
        server.settimeout(30)
        server.connect({address!r})
        server.sendall(json.dumps([sys.argv[1:], dict(os.environ)]).encode())
except OSError:
    os.execv({fallback!r}, [{fallback!r}, *sys.argv[1:]])
"""


def write_shim(directory, address: str) -> Path:
    """The ``flwr-clientapp`` executable in ``directory`` that asks :func:`serve` to fork."""
    path = Path(directory) / "flwr-clientapp"
    path.parent.mkdir(parents=True, exist_ok=True)
    fallback = str(Path(sys.executable).parent / "flwr-clientapp")
    shim = SHIM.format(python=sys.executable, address=address, fallback=fallback)
    path.write_text(shim, encoding="utf-8")
    path.chmod(0o755)
    return path


def _receive(connection) -> bytes:
    chunks = []
    while chunk := connection.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _child(argv, environment, entry_point) -> None:
    """Become ``flwr-clientapp argv`` with ``environment``; never returns."""
    code = 1
    try:
        os.environ.clear()
        os.environ.update(environment)
        sys.argv = ["flwr-clientapp", *argv]
        entry_point()
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _stop(signum, frame) -> None:
    print(f"forkserver: stopped by signal {signum}", file=sys.stderr, flush=True)
    sys.exit(0)


def serve(address: str, preload=()) -> None:
    """Fork one ``flwr-clientapp`` per connection on the Unix socket ``address``."""
    from importlib import import_module

    from flwr.supernode.cli import flwr_clientapp

    for module in preload:  # e.g. the ClientApp's modules, imported once here
        import_module(module)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    signal.signal(signal.SIGTERM, _stop)
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(address)
        listener.listen(64)
        print("ready", flush=True)
        while True:
            connection, _ = listener.accept()
            try:
                with connection:
                    connection.settimeout(30)
                    argv, environment = json.loads(_receive(connection))
            except (OSError, ValueError) as error:  # a shim that died: serve the next one
                print(f"forkserver: bad request {error!r}", file=sys.stderr, flush=True)
                continue
            if os.fork() == 0:
                listener.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _child(argv, environment, flwr_clientapp)


def _preload_clientapp(federated: Path) -> None:
    """The ClientApp's modules as the app's loader imports them (``runner.CLIENT_SOURCE``)."""
    import types

    for name, path in (("_fedmultiboost", federated), ("_fedmultiboost.flower",
                                                       federated / "flower")):  # fmt: skip
        package = sys.modules.setdefault(name, types.ModuleType(name))
        package.__path__ = [str(path)]


if __name__ == "__main__":
    _preload_clientapp(Path(__file__).resolve().parent.parent)
    serve("\0" + sys.argv[1], ["_fedmultiboost.flower.clientapp"])  # abstract socket name
