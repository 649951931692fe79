"""Which tag transitions a tagging scheme allows, as masks for constrained CRF decoding.

pytorch-crf has no constraint API; `ConstrainedCRF` applies these masks to its start, transition
and end scores so that Viterbi can never return, e.g., ``O → I-PER`` in IOB2 or ``B-PER → I-LOC``.
The semantics follow AllenNLP's `allowed_transitions` for BIO (IOB2), IOB1 and BIOUL (BIOES).
"""

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import torch

from ner.data.tag_schemes import SCHEMES, continues_chunk, split_tag


@dataclass(frozen=True)
class TransitionMasks:
    """Boolean masks of allowed moves: start (K,), transitions[from, to] (K, K), end (K,)."""

    start: torch.Tensor
    transitions: torch.Tensor
    end: torch.Tensor


def _can_start(scheme: str, prefix: str) -> bool:
    return {
        "iob1": prefix in {"O", "I"},
        "iob2": prefix in {"O", "B"},
        "bioes": prefix in {"O", "B", "S"},
    }[scheme]


def _can_end(scheme: str, prefix: str) -> bool:
    return scheme != "bioes" or prefix in {"O", "E", "S"}


def _can_follow(scheme: str, previous: tuple[str, str], current: tuple[str, str]) -> bool:
    (p_prefix, p_type), (c_prefix, c_type) = previous, current
    if scheme == "iob1":
        # B-X only separates two adjacent X chunks, so it must follow an X chunk.
        return c_prefix != "B" or (p_prefix in {"B", "I"} and p_type == c_type)
    if scheme == "iob2":
        return c_prefix != "I" or (p_prefix in {"B", "I"} and p_type == c_type)
    # bioes: inside a chunk only I-X/E-X of the same type; outside only O/B/S.
    if p_prefix in {"B", "I"}:
        return c_prefix in {"I", "E"} and p_type == c_type
    return c_prefix in {"O", "B", "S"}


def allowed_transitions(scheme: str, tags: list[str]) -> TransitionMasks:
    """Masks for `tags` (index order = CRF tag ids) under `scheme` ("iob1" | "iob2" | "bioes")."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown tag scheme {scheme!r}; expected one of {SCHEMES}")
    parts = [split_tag(tag, scheme) for tag in tags]
    start = torch.tensor([_can_start(scheme, p) for p, _ in parts], dtype=torch.bool)
    end = torch.tensor([_can_end(scheme, p) for p, _ in parts], dtype=torch.bool)
    transitions = torch.tensor(
        [[_can_follow(scheme, prev, cur) for cur in parts] for prev in parts], dtype=torch.bool
    )
    return TransitionMasks(start=start, transitions=transitions, end=end)


def is_valid_sequence(scheme: str, tags: list[str]) -> bool:
    """Whether `tags` is a sequence that `allowed_transitions(scheme, ...)` permits."""
    if not tags:
        return True
    parts = [split_tag(tag) for tag in tags]
    return (
        _can_start(scheme, parts[0][0])
        and _can_end(scheme, parts[-1][0])
        and all(_can_follow(scheme, a, b) for a, b in pairwise(parts))
    )


def continuation_mask(tags: list[str]) -> np.ndarray:
    """(K, K) bool: ``[i, j]`` when tag j right after tag i extends i's chunk under lenient
    decoding (`ner.data.tag_schemes.continues_chunk`), the same in every scheme; the chunk
    probabilities of `ner.tagger.marginals` sum over the tag sequences this admits."""
    return np.array([[continues_chunk(previous, tag) for tag in tags] for previous in tags])
