"""``flower-supernode`` polling faster, for the local federations of :mod:`.runner`.

Lives here: :func:`main`, Flower's own SuperNode entry point with a shorter pause in its loop.
An idle SuperNode asks the SuperLink for work every 3 s and checks for its ClientApp's reply
every 0.5 s (Flower 1.42, ``flwr.supernode.start_client_internal``), tuned for training rounds
of minutes; a FEDMULTIBOOST round is ~20 short requests, so :mod:`.runner` starts its SuperNodes
through this module (run as a script: it imports neither manytask nor anything when imported).
Nothing else changes; real deployments use ``flower-supernode`` itself.
"""

import sys
import time
import types

IDLE_POLL = 0.2  # seconds between asks for work (Flower: 3)
REPLY_POLL = 0.02  # seconds between checks for the ClientApp's reply (Flower: 0.5)


def _shorter(seconds: float) -> float:
    return min(seconds, IDLE_POLL) if seconds >= 1.0 else min(seconds, REPLY_POLL)


def main(argv=None) -> None:
    """Run ``flower-supernode`` with ``argv`` (default: this process's arguments)."""
    import flwr.supernode.start_client_internal as internal
    from flwr.supernode.cli.flower_supernode import flower_supernode

    sleep = time.sleep
    patched = types.ModuleType("time")
    patched.__dict__.update(time.__dict__)
    patched.sleep = lambda seconds: sleep(_shorter(seconds))
    internal.time = patched  # only this module's pauses; everything else keeps time.sleep
    sys.argv = ["flower-supernode", *(sys.argv[1:] if argv is None else argv)]
    flower_supernode()


if __name__ == "__main__":
    main()
