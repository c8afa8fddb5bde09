"""Secure sums of FEDMULTIBOOST's replies: pairwise additive masking (Bonawitz et al. 2017).

The server needs only sums over the clients of one source (Φ_c and Z_{t,c} as ``loss_sum``
and ``n_points``, the edges β_{t,c,r} as ``edge_sums``; the line search's ``loss_sums`` and
``slope_sums``; with trees the per-(node, feature, bin) ``histogram`` of the ``grow`` and
``histogram`` phases, from which the server grows the trees). With masking, client c of a
group G (the clients of one source in one request batch) sends, for its reply x_c in fixed
point (:func:`encode`: round(x·2³²) mod 2⁶⁴),

    y_c = encode(x_c) + Σ_{c'∈G, c'>c} PRG(s_{cc'}, nonce) − Σ_{c'∈G, c'<c} PRG(s_{cc'}, nonce)

mod 2⁶⁴, where s_{cc'} = HKDF(X25519(sk_c, pk_{c'})) is the seed c and c' agree on from the
public keys the server relays (Bonawitz et al., §4, "masking with one-time pads" over a
Diffie–Hellman key agreement), the PRG is AES-256 in counter mode and the nonce names the
request batch. Every mask cancels in Σ_{c∈G} y_c, which the server decodes
(:func:`unmask_sum`); a single y_c is uniform on Z_{2⁶⁴} whatever x_c is. Bonawitz et al.'s
Shamir-shared seeds, which recover the sum when a client drops out mid-batch, are not needed
here: a batch with a missing client is discarded unopened and the driver restarts the round
with fresh masks among the others. A group of one client (a source with one participant)
has no peer: its sum is its value. Values must satisfy |x| < 2³¹ (and so must the sums);
the resolution is 2⁻³² ≈ 2.3e-10, added once per client to each sum.

Not Flower's SecAgg+ (``flwr.server.workflow.SecAggPlusWorkflow`` with
``flwr.client.mod.secaggplus_mod``): in Flower 1.42 it runs inside the legacy strategy
workflow (``LegacyContext``, ``FitIns``/``FitRes``, one weighted average of the model
parameters per round, on ``train`` messages), not on the ``query`` messages of a ServerApp's
own loop over a Grid, and it averages over all sampled clients, where FEDMULTIBOOST needs one
sum per source.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = [
    "FRACTION_BITS",
    "decode",
    "encode",
    "mask",
    "new_key_pair",
    "pair_seed",
    "prg",
    "unmask_sum",
]

FRACTION_BITS = 32  # fixed point: x ↦ round(x·2³²) mod 2⁶⁴
_SCALE = float(2**FRACTION_BITS)
_INT = "int:"  # prefix of the keys whose plain values are integers (n_points)


def new_key_pair(seed: bytes | None = None) -> tuple[bytes, bytes]:
    """(private, public) X25519 key pair, raw 32 bytes each; ``seed``: 32 bytes for a
    reproducible key (tests), None for a fresh one.

    Parameters
    ----------
    seed : bytes, optional
        32 bytes, the private key; None draws a fresh one.

    Returns
    -------
    private : bytes
        The raw private key, 32 bytes.
    public : bytes
        The raw public key, 32 bytes.

    Examples
    --------
    >>> private, public = new_key_pair(bytes(range(32)))
    >>> len(private), len(public), new_key_pair(private)[1] == public
    (32, 32, True)
    """
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    key = X25519PrivateKey.generate() if seed is None else X25519PrivateKey.from_private_bytes(seed)
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return _private_bytes(key), public


def _private_bytes(key) -> bytes:
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    return key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())


def pair_seed(private: bytes, peer_public: bytes) -> bytes:
    """The 32-byte seed two clients share: HKDF-SHA256 of their X25519 shared secret.

    Parameters
    ----------
    private : bytes
        This client's raw private key.
    peer_public : bytes
        The peer's raw public key.

    Returns
    -------
    bytes
        The 32-byte seed; both clients of the pair get the same.

    Examples
    --------
    >>> keys = [new_key_pair(bytes([c + 1]) * 32) for c in range(2)]
    >>> pair_seed(keys[0][0], keys[1][1]) == pair_seed(keys[1][0], keys[0][1])
    True
    """
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric.x25519 import (
        X25519PrivateKey,
        X25519PublicKey,
    )
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    secret = X25519PrivateKey.from_private_bytes(private).exchange(
        X25519PublicKey.from_public_bytes(peer_public)
    )
    return HKDF(hashes.SHA256(), 32, None, b"fedmultiboost pairwise mask").derive(secret)


def prg(seed: bytes, nonce, n: int) -> np.ndarray:
    """``n`` pseudo-random uint64 from AES-256-CTR keyed by ``seed``, its counter block
    derived from ``nonce`` (integers naming the request batch).

    Parameters
    ----------
    seed : bytes
        The 32-byte AES key (:func:`pair_seed`).
    nonce : array-like of int
        Names the request batch.
    n : int
        How many words.

    Returns
    -------
    ndarray of shape (n,), dtype uint64
        The stream; the same for the same seed and nonce.

    Examples
    --------
    >>> stream = prg(bytes(32), (1, 2), 3)
    >>> stream.dtype, stream.shape, bool((stream == prg(bytes(32), (1, 2), 3)).all())
    (dtype('uint64'), (3,), True)
    """
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    counter = hashlib.sha256(np.asarray(nonce, dtype=np.int64).tobytes()).digest()[:16]
    encryptor = Cipher(algorithms.AES(seed), modes.CTR(counter)).encryptor()
    stream = encryptor.update(bytes(8 * n)) + encryptor.finalize()
    return np.frombuffer(stream, dtype=np.uint64).copy()


def encode(value) -> np.ndarray:
    """Fixed point: round(x·2³²) as uint64 (two's complement); ValueError if |x| ≥ 2³¹.

    Parameters
    ----------
    value : float or array-like
        Finite values, |x| < 2³¹.

    Returns
    -------
    ndarray of uint64
        The words, of ``value``'s shape.

    Examples
    --------
    >>> encode([1.0, -0.5]).tolist() == [2**32, 2**64 - 2**31]
    True
    """
    x = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(x)) or np.any(np.abs(x) >= 2.0 ** (63 - FRACTION_BITS)):
        raise ValueError(
            f"secure sums hold finite values with |x| < 2^{63 - FRACTION_BITS}, got {value!r}"
        )
    return np.round(x * _SCALE).astype(np.int64).view(np.uint64)


def decode(words) -> np.ndarray:
    """Inverse of :func:`encode` (floats).

    Parameters
    ----------
    words : array-like of uint64
        Fixed-point words, e.g. a sum of encoded values mod 2⁶⁴.

    Returns
    -------
    ndarray of float
        The values, to 2⁻³².

    Examples
    --------
    >>> decode(encode([1.0, -0.5]) + encode([0.25, 0.25])).tolist()
    [1.25, -0.25]
    """
    return np.asarray(words, dtype=np.uint64).view(np.int64) / _SCALE


def mask(message: dict, me: int, private: bytes, peers: dict, nonce) -> dict:
    """``message`` (a client's reply: numbers and arrays) encoded and masked for the group
    of ``me`` and ``peers`` ({client id: public key}): {key: uint64 array}, the keys of
    integer values marked (they are decoded back to integers).

    Parameters
    ----------
    message : dict
        The reply: numbers and arrays, |x| < 2³¹.
    me : int
        This client's id in the group.
    private : bytes
        Its raw private key.
    peers : dict
        {client id: raw public key} of the group (``me`` may be among them).
    nonce : array-like of int
        Names the request batch.

    Returns
    -------
    dict
        {key: uint64 array}, integer keys prefixed; uniform on Z_{2⁶⁴} alone.

    Examples
    --------
    >>> keys = [new_key_pair(bytes([c + 1]) * 32) for c in range(2)]
    >>> peers = {c: public for c, (_, public) in enumerate(keys)}
    >>> masked = mask({"loss_sum": 0.5}, 0, keys[0][0], peers, (1, 1))
    >>> masked["loss_sum"].dtype, bool(masked["loss_sum"] == encode(0.5))
    (dtype('uint64'), False)
    """
    keys = sorted(message)
    words = [encode(message[key]) for key in keys]
    sizes = [w.size for w in words]
    total = np.zeros(sum(sizes), dtype=np.uint64)
    for peer, public in sorted(peers.items()):
        if peer == me:
            continue
        stream = prg(pair_seed(private, public), nonce, total.size)
        total = total + stream if me < peer else total - stream  # mod 2⁶⁴
    masked, offset = {}, 0
    for key, word, size in zip(keys, words, sizes):
        name = _INT + key if isinstance(message[key], (int, np.integer)) else key
        masked[name] = (word.ravel() + total[offset : offset + size]).reshape(word.shape)
        offset += size
    return masked


def unmask_sum(masked: list) -> dict:
    """Σ of a whole group's masked replies (:func:`mask`), decoded: the plain sum of each key
    (int for integer values).

    Parameters
    ----------
    masked : list of dict
        The masked replies of every client of the group.

    Returns
    -------
    dict
        The sum of each key: int, float or ndarray.

    Examples
    --------
    >>> keys = [new_key_pair(bytes([c + 1]) * 32) for c in range(2)]
    >>> peers = {c: public for c, (_, public) in enumerate(keys)}
    >>> masked = [mask({"n_points": 3 + c, "loss_sum": 0.5 * c}, c, keys[c][0], peers, (1, 1))
    ...           for c in range(2)]
    >>> unmask_sum(masked)
    {'loss_sum': 0.5, 'n_points': 7}
    """
    sums = {}
    for key in masked[0]:
        shape = np.shape(masked[0][key])
        total = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=np.uint64)
        for reply in masked:
            total += np.asarray(reply[key], dtype=np.uint64).ravel()  # mod 2⁶⁴
        value = decode(total).reshape(shape)
        if key.startswith(_INT):
            sums[key[len(_INT) :]] = int(np.round(value))
        else:
            sums[key] = float(value) if value.ndim == 0 else value
    return sums
