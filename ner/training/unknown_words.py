"""Training the unknown-word vector: singleton replacement (Lample et al., 2016).

A vocabulary built from the training data covers every training token, so without help the
unknown-word row would never receive a gradient and every word outside the vocabulary would map
to an untrained vector. Each training occurrence of a word seen only once in training is replaced
by the unknown id with probability `probability` (0.5 in the paper), so the model learns what to
do with a word it has not seen.
"""

from collections import Counter
from collections.abc import Sequence

import numpy as np
import torch

from ner.common.vocabulary import Vocabulary


class SingletonReplacement:
    """Replaces singleton word ids in a training batch by the unknown id."""

    def __init__(
        self,
        singleton_ids: Sequence[int],
        vocabulary_size: int,
        probability: float,
        unknown_id: int = 1,
    ) -> None:
        if not 0.0 <= probability <= 1.0:
            raise ValueError(f"the replacement probability must be in [0, 1], got {probability}")
        self.is_singleton = torch.zeros(vocabulary_size, dtype=torch.bool)  # (V,)
        self.is_singleton[list(singleton_ids)] = True
        self.probability, self.unknown_id = probability, unknown_id

    @classmethod
    def from_sentences(
        cls, sentences: Sequence[Sequence[str]], vocabulary: Vocabulary, probability: float
    ) -> "SingletonReplacement":
        """The words of `vocabulary` that occur exactly once (lowercased) in `sentences`."""
        counts = Counter(token.lower() for sentence in sentences for token in sentence)
        unknown = vocabulary.unknown_id
        if unknown is None:
            raise ValueError("singleton replacement needs a vocabulary with an unknown item")
        singletons = [vocabulary.id(word) for word, n in counts.items() if n == 1]
        singletons = [i for i in singletons if i != unknown]  # words outside `vocabulary`
        return cls(singletons, len(vocabulary), probability, unknown)

    def __call__(self, words: torch.Tensor, generator: np.random.Generator) -> torch.Tensor:
        """words: (B, T) ids of trained words → the same with some singletons set to unknown;
        the draws come from `generator`, so a run's replacements depend on its seed alone."""
        draws = torch.from_numpy(generator.random(tuple(words.shape))) < self.probability
        replace = self.is_singleton.to(words.device)[words] & draws.to(words.device)
        return words.masked_fill(replace, self.unknown_id)
