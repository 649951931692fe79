"""The fast biLM against the plain per-time-step reference, on random weights where clips fire.

Random weights large enough to saturate the clips also amplify float32 rounding differences
(≈1e-5 here), so both implementations run in float64 and must agree to 1e-9; the float32 path is
checked on milder random weights here and against the real fixture in test_bilm_fixture.py.
"""

import json

import torch

from ner.bilm.bilm import WARMUP_TEXT, BiLM
from ner.bilm.char_ids import batch_to_ids
from ner.bilm.reference import ReferenceBiLM

TOLERANCE = {"atol": 1e-9, "rtol": 0.0}


def load_both(options_file, weight_file, state: str) -> tuple[BiLM, ReferenceBiLM]:
    fast = BiLM.from_files(options_file, weight_file, state=state).double()
    return fast, ReferenceBiLM.from_files(options_file, weight_file, dtype=torch.float64)


def test_random_weights_make_both_clips_fire(random_model, tmp_path, sentences):
    options_file, weight_file = random_model()
    ids = batch_to_ids(sentences)
    clipped = ReferenceBiLM.from_files(options_file, weight_file)(ids)[0]
    for clip in ("cell_clip", "proj_clip"):
        options = json.loads(options_file.read_text())
        options["lstm"][clip] = None
        unclipped_file = tmp_path / f"no_{clip}.json"
        unclipped_file.write_text(json.dumps(options))
        unclipped = ReferenceBiLM.from_files(unclipped_file, weight_file)(ids)[0]
        assert (clipped - unclipped).abs().max() > 0.1, clip


def test_stateful_matches_reference_across_batches_of_changing_size(random_model, sentences):
    fast, reference = load_both(*random_model(seed=3), state="stateful")
    batches = [sentences[:4], sentences[2:], sentences[:2], sentences[1:4], sentences]
    with torch.no_grad():
        for batch in batches:
            ids = batch_to_ids(batch)
            expected, expected_mask = reference(ids)
            actual, mask = fast(ids)
            assert torch.equal(mask, expected_mask)
            torch.testing.assert_close(actual, expected, **TOLERANCE)


def test_stateless_and_warm_match_reference_started_from_the_same_state(random_model, sentences):
    fast, reference = load_both(*random_model(seed=5), state="stateless")
    ids = batch_to_ids(sentences)
    with torch.no_grad():
        torch.testing.assert_close(fast(ids)[0], reference(ids)[0], **TOLERANCE)
        fast.state = "warm"
        for sentence in sentences[:3]:
            reference.reset_states()
            for line in WARMUP_TEXT.splitlines():  # warm = the state after reading WARMUP_TEXT
                reference(batch_to_ids([line.split()]))
            expected = reference(batch_to_ids([sentence]))[0]
            torch.testing.assert_close(fast(batch_to_ids([sentence]))[0], expected, **TOLERANCE)


def test_float32_paths_agree_on_moderate_random_weights(random_model, sentences):
    """Where rounding is not amplified (cell clip still fires), float32 agrees to 2e-6."""
    options_file, weight_file = random_model(seed=1, scales=(1.5, 1.5, 1.5))
    fast = BiLM.from_files(options_file, weight_file, state="stateless")
    reference = ReferenceBiLM.from_files(options_file, weight_file)
    ids = batch_to_ids(sentences)
    with torch.no_grad():
        torch.testing.assert_close(fast(ids)[0], reference(ids)[0], atol=2e-6, rtol=0)
